/**
 * The real service (`ceres serve`, a child process) with a VOMS directory: a real VOMS
 * proxy of the dev user, its AC signed by a VOMS server certificate from the service's
 * own dev CA, is authenticated; its FQANs appear in the connection's debug log line
 * once an LSC file for the VO is added while the service runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toOneline } from '../../../src/pki/dn.js';
import { until } from '../../helpers/poll.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../../helpers/service.js';
import { runVomsProxyFake, serverFromCaFiles, vomsSkip, type Cred } from './voms-fixture.js';

const HOST = 'voms.example.org';
const FQANS = ['/atlas/Role=NULL/Capability=NULL', '/atlas/usatlas/Role=pilot/Capability=NULL'];

interface LogLine {
  msg?: string;
  dn?: string;
  vo?: string;
  fqans?: string[];
}

describe('VOMS attributes in the running service', { skip: vomsSkip }, () => {
  let work: string;
  let vomsDir: string;
  let ceres: RunningCeres;
  let server: Cred;
  let proxyFile: string;

  const logLines = (): LogLine[] =>
    ceres
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        try {
          return JSON.parse(l) as LogLine;
        } catch {
          return {};
        }
      });
  /** One request on a new connection (the identity is computed per connection). */
  const request = async (): Promise<number> => {
    const c = new Client(ceres.url, proxyFile, join(ceres.pkiDir, 'ca.pem'));
    try {
      return (await c.req('GET', '/rest/1.0/jobs')).status;
    } finally {
      await c.close();
    }
  };

  before(async () => {
    work = tempDir('voms-service');
    vomsDir = join(work, 'vomsdir');
    mkdirSync(vomsDir);
    ceres = await startCeres({ stateDir: join(work, 'state'), config: { vomsDir, log: { level: 'debug' } } });
    server = await serverFromCaFiles(work, join(ceres.pkiDir, 'ca.pem'), join(ceres.pkiDir, 'cakey.pem'), HOST);
    const user = { certFile: join(ceres.pkiDir, 'usercert.pem'), keyFile: join(ceres.pkiDir, 'userkey.pem') };
    const proxy = await runVomsProxyFake(work, join(ceres.pkiDir, 'certificates'), user, {
      vo: 'atlas',
      fqans: FQANS,
      server,
      host: HOST,
    });
    proxyFile = join(work, 'vomsproxy.pem');
    writeFileSync(proxyFile, proxy.pem, { mode: 0o600 });
  });
  after(async () => {
    if (ceres !== undefined) await stopCeres(ceres);
    removeDir(work);
  });

  it('authenticates the VOMS proxy, ignoring its attributes while no LSC names the server, and uses them once one is added', async () => {
    assert.equal(await request(), 200);
    await until(
      () => logLines().some((l) => l.msg === 'VOMS attributes ignored'),
      'the log line saying why the attributes were ignored',
    );
    assert.ok(!logLines().some((l) => l.msg === 'client authenticated' && l.fqans !== undefined));

    mkdirSync(join(vomsDir, 'atlas'));
    writeFileSync(join(vomsDir, 'atlas', `${HOST}.lsc`), `${server.dn}\n${toOneline(server.cert.issuer)}\n`);
    await until(
      async () => {
        assert.equal(await request(), 200);
        return logLines().some((l) => l.msg === 'client authenticated' && l.fqans !== undefined);
      },
      'a connection with FQANs',
      30_000,
    );
    const line = logLines().find((l) => l.msg === 'client authenticated' && l.fqans !== undefined);
    assert.equal(line?.vo, 'atlas');
    assert.deepEqual(line?.fqans, FQANS);
    assert.match(line?.dn ?? '', /CN=/);
  });
});
