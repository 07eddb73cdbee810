// VOMS-based authorization and mapping with the real service and real VOMS proxies
// (voms-proxy-fake): a proxy of VO atlas is allowed and mapped to a pool account, its
// FQANs are recorded and published; the same DN without VOMS attributes, and a proxy
// of VO atlasx (not under the /atlas prefix), are refused; a role opens its queue. An AC
// moved into the proxy of another user is ignored with a log line: that user is refused.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { toOneline } from '../../src/pki/dn.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { pemBlocks } from '../../src/pki/certificate.js';
import { until } from '../helpers/poll.js';
import { acExtension, proxyWithAc, runVomsProxyFake, serverFromCaFiles, vomsSkip } from '../auth/voms/voms-fixture.js';

const HOST = 'voms.example.org';
const TRUE_JOB = '&(executable="/bin/true")';
const ATLAS_FQANS = ['/atlas/Role=NULL/Capability=NULL', '/atlas/prod/Role=production/Capability=NULL'];

describe('VOMS authorization and mapping (real service, real VOMS proxies)', { skip: vomsSkip }, () => {
  let work: string;
  let ceres: RunningCeres;
  const files: Record<string, string> = {};
  const clients: Client[] = [];
  const client = (name: string): Client => {
    const c = new Client(ceres.url, files[name]!, join(ceres.pkiDir, 'ca.pem'));
    clients.push(c);
    return c;
  };

  before(async () => {
    work = tempDir('authz-voms');
    const pki = await initDevPki(join(work, 'state', 'pki'));
    const server = await serverFromCaFiles(work, pki.files.caCert, pki.files.caKey, HOST);
    const vomsDir = join(work, 'vomsdir');
    for (const vo of ['atlas', 'atlasx']) {
      mkdirSync(join(vomsDir, vo), { recursive: true });
      writeFileSync(join(vomsDir, vo, `${HOST}.lsc`), `${server.dn}\n${toOneline(server.cert.issuer)}\n`);
    }
    const certDir = pki.files.certificatesDir;
    const user = { certFile: pki.files.userCert, keyFile: pki.files.userKey };
    const other = await addDevUser(pki.dir, 'xuser');
    const write = (name: string, pem: string): void => {
      files[name] = join(work, `${name}.pem`);
      writeFileSync(files[name], pem, { mode: 0o600 });
    };
    write(
      'atlas',
      (await runVomsProxyFake(work, certDir, user, { vo: 'atlas', fqans: ATLAS_FQANS, server, host: HOST })).pem,
    );
    write(
      'atlasx',
      (
        await runVomsProxyFake(
          work,
          certDir,
          { certFile: other.certFile, keyFile: other.keyFile },
          { vo: 'atlasx', fqans: ['/atlasx/Role=NULL/Capability=NULL'], server, host: HOST },
        )
      ).pem,
    );
    files.plain = pki.files.userProxy;
    // xuser's own proxy carrying the AC the VOMS server issued to the dev user.
    const xuserPem = readFileSync(other.keyFile, 'utf8') + readFileSync(other.certFile, 'utf8');
    const atlasPem = readFileSync(files.atlas!, 'utf8');
    const atlasProxy = { pem: atlasPem, ders: pemBlocks(atlasPem) };
    write('stolen', (await proxyWithAc({ pem: xuserPem, ders: pemBlocks(xuserPem) }, acExtension(atlasProxy))).pem);
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        // info: the level of the line saying why VOMS attributes were ignored.
        log: { level: 'info' },
        vomsDir,
        authorization: {
          groups: [
            { name: 'atlas', match: [{ voms: '/atlas' }] },
            { name: 'atlasprod', match: [{ voms: '/atlas/Role=production' }] },
          ],
          allow: ['atlas'],
        },
        mapping: [{ group: 'atlas', pool: { accounts: ['atlas001', 'atlas002'] } }],
        cluster: { queues: [{ name: 'main' }, { name: 'prod', allow: ['atlasprod'] }] },
      },
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    if (ceres !== undefined) await stopCeres(ceres);
    removeDir(work);
  });

  it('a VOMS proxy of VO atlas is allowed, mapped to a pool account; its FQANs are recorded and published', async () => {
    const c = client('atlas');
    const [item] = await c.submit(`${TRUE_JOB}(queue="prod")`);
    assert.equal(item['status-code'], '201', JSON.stringify(item));
    const [i] = await c.action('info', [item.id]);
    const act = i.info_document.ComputingActivity;
    assert.equal(act.LocalOwner, 'atlas001');
    assert.equal(act.Queue, 'prod', 'the production role opens the prod queue');
    assert.deepEqual(act.OtherInfo, ['SubmittedVia=org.nordugrid.arcrest', ...ATLAS_FQANS.map((f) => `VOMSFQAN=${f}`)]);
  });

  it('the same DN without VOMS attributes is in no group: 403', async () => {
    const r = await client('plain').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    assert.equal(r.status, 403);
    assert.equal(r.json().code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
  });

  it('VO atlasx does not fall under the /atlas prefix: 403', async () => {
    const r = await client('atlasx').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    assert.equal(r.status, 403);
    assert.equal(r.json().code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
  });

  it("an AC moved into another user's proxy is ignored, with the reason logged: that user is in no group, 403", async () => {
    const r = await client('stolen').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    assert.equal(r.status, 403);
    assert.equal(r.json().code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
    await until(
      () =>
        ceres
          .output()
          .split('\n')
          .some((l) => l.includes('"VOMS attributes ignored"') && l.includes('was issued to another certificate')),
      'the log line saying why the attributes were ignored',
    );
  });
});
