// GSI through the service: a job whose inputs and outputs are on an xrootd server that
// admits GSI clients only stages them with its own delegated proxy (delegated over REST,
// named by delegationid), and FINISHes; a job without a delegation fails, the reason
// naming the URL and saying the credential was not accepted. The service's gfal2 helpers
// trust the site's CA directory (`tls.caDir`: here a copy of the service's development CA,
// which also signed the xrootd server's host certificate), whatever X509_CERT_DIR the
// service's own environment has.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { signProxyFromCsr } from '../../src/pki/issue.js';
import { DEV_PKI_FILES, initDevPki } from '../../src/pki/dev-pki.js';
import { XrootdServer, xrootdAvailable } from '../staging/helpers/xrootd.js';

const available = xrootdAvailable();
if (!available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('xrootd, gfal2 and root are needed here (CERES_REQUIRE_GFAL2=1)');

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

describe(
  'root:// with GSI through the service',
  { skip: !available && 'needs root, xrootd-server and python3-gfal2' },
  () => {
    let ceres: RunningCeres;
    let c: Client;
    let xrd: XrootdServer;
    let caCopy: string;
    const data = randomBytes(64_000);
    before(async () => {
      // The service's development PKI, made before it starts (it reuses it), so that its CA
      // directory can be given to everything that must trust it: a copy readable by all, as
      // /etc/grid-security/certificates is, for xrootd and for the helpers (they run as the
      // job's account), given to the service as its site CA directory.
      const stateDir = tempDir('state');
      const pki = join(stateDir, 'pki');
      await initDevPki(pki);
      caCopy = await mkdtemp(join(tmpdir(), 'ceres-gsi-ca-'));
      await chmod(caCopy, 0o755);
      await cp(join(pki, DEV_PKI_FILES.certificates), join(caCopy, 'certificates'), { recursive: true });
      await chmod(join(caCopy, 'certificates'), 0o755);
      ceres = await startCeres({
        stateDir,
        config: {
          tls: {
            hostCert: join(pki, DEV_PKI_FILES.hostCert),
            hostKey: join(pki, DEV_PKI_FILES.hostKey),
            caDir: join(caCopy, 'certificates'),
          },
          staging: { retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 0.2, maxAttempts: 2 } },
        },
      });
      // Its start line names the site CA directory; the user's proxy is in the PKI folder.
      ceres = { ...ceres, pkiDir: pki };
      c = Client.forUser(ceres);
      xrd = await XrootdServer.start({
        gsi: {
          certDir: join(caCopy, 'certificates'),
          hostCert: await readFile(join(pki, DEV_PKI_FILES.hostCert), 'utf8'),
          hostKey: await readFile(join(pki, DEV_PKI_FILES.hostKey), 'utf8'),
        },
      });
      await xrd.put('in.bin', data);
      await xrd.put('other.bin', data); // never fetched with a credential: not in the cache
    });
    after(async () => {
      await c?.close();
      if (ceres !== undefined) {
        await stopCeres(ceres);
        removeDir(ceres.stateDir);
      }
      await xrd?.stop();
      if (caCopy !== undefined) await rm(caCopy, { recursive: true, force: true });
    });

    const errors = async (id: string): Promise<string> => {
      const [info] = await c.action('info', [id]);
      return JSON.stringify(info.info_document.ComputingActivity.Error ?? '');
    };

    it("stages a root:// input and output with the job's own delegated proxy: FINISHED", async () => {
      const made = await c.req('POST', '/rest/1.1/delegations?action=new', '', { accept: '' });
      assert.equal(made.status, 201, made.text);
      const id = String(made.headers.location).split('/').pop() as string;
      const userProxy = await readFile(join(ceres.pkiDir, 'userproxy.pem'), 'utf8');
      const signed = await signProxyFromCsr(made.text, userProxy, userProxy);
      assert.equal((await c.req('PUT', `/rest/1.1/delegations/${id}`, signed.chainPem)).status, 200);
      const [item] = await c.submit(`&(executable="/bin/cp")(arguments="in.bin" "out.bin")(delegationid="${id}")
      (inputfiles=("in.bin" "${xrd.url('in.bin')}"))(outputfiles=("out.bin" "${xrd.url('out.bin')}"))`);
      const st = await c.waitFor([item.id], FINAL, 120_000);
      assert.equal(st.get(item.id), 'FINISHED', await errors(item.id));
      assert.deepEqual(await readFile(xrd.path('out.bin')), data);
    });

    it('a job without a delegation is refused by the server: FAILED naming the URL', async () => {
      const [item] = await c.submit(`&(executable="/bin/true")(inputfiles=("x" "${xrd.url('other.bin')}"))`);
      const st = await c.waitFor([item.id], FINAL, 120_000);
      assert.equal(st.get(item.id), 'FAILED');
      assert.match(await errors(item.id), /other\.bin.*(authentication failed|not accepted)/);
    });
  },
);
