// root:// staging with GSI: an xrootd server (started once for this file) that admits
// GSI-authenticated clients only, trusting the test CA. A job's transfers authenticate
// with the job's own delegated proxy, handed to the gfal2 helper in a file; a job whose
// proxy the server refuses (another CA's, or none) fails with a reason saying so, naming
// the URL, and nothing of the proxy appears in the reason or the log.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import type { Credential } from '../../src/staging/credentials.js';
import type { StageInFile } from '../../src/staging/types.js';
import { DEV_PKI_FILES } from '../../src/pki/dev-pki.js';
import { makePki, mapCredentials, never, recordingLogger, stagingConfig, type TestPki } from './helpers/fixtures.js';
import { XrootdServer, gfal2HelperPids, xrootdAvailable } from './helpers/xrootd.js';
import { until } from '../helpers/poll.js';
import { createAccount, removeAccounts } from '../helpers/local-accounts.js';

const available = xrootdAvailable();
if (!available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('xrootd, gfal2 and root are needed here (CERES_REQUIRE_GFAL2=1)');

const input = (name: string, source: string): StageInFile => ({ name, source, executable: false });

describe(
  'gfal2 staging with GSI against xrootd',
  { skip: !available && 'needs root, xrootd-server and python3-gfal2' },
  () => {
    let dir: string;
    let xrd: XrootdServer;
    let pki: TestPki;
    let certDir: string;
    let stranger: TestPki;
    const data = randomBytes(100_000);
    before(async () => {
      // Readable by the xrootd account, which reads the CA directory.
      dir = await mkdtemp(join(tmpdir(), 'ceres-gsi-'));
      await chmod(dir, 0o755);
      pki = await makePki(join(dir, 'ok'));
      certDir = join(dir, 'ok', 'pki', DEV_PKI_FILES.certificates);
      for (const d of [join(dir, 'ok'), join(dir, 'ok', 'pki'), certDir]) await chmod(d, 0o755);
      stranger = await makePki(join(dir, 'other'));
      xrd = await XrootdServer.start({ gsi: { certDir, hostCert: pki.hostCert, hostKey: pki.hostKey } });
      await xrd.put('gsi.bin', data);
    });
    after(async () => {
      await xrd?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    let n = 0;
    const stage = async (credential: Credential | undefined, files: StageInFile[], logger = recordingLogger()) => {
      const sessionDir = join(dir, `s${n++}`);
      await mkdir(sessionDir);
      const s = new Stager({
        config: stagingConfig({ cache: { enabled: false }, retry: { maxAttempts: 2 } }),
        credentials: mapCredentials({}, { '/CN=job owner': credential }),
        certDir,
        logger,
      });
      const r = await s.stageIn({ id: `g${n}`, owner: '/CN=job owner', sessionDir, files }, never);
      return { r, sessionDir, logger };
    };

    it("downloads and uploads with the job's own proxy", async () => {
      const { r, sessionDir } = await stage(pki.alice, [input('in.bin', xrd.url('gsi.bin'))]);
      assert.equal(r.ok, true, r.failureReason);
      assert.deepEqual(await readFile(join(sessionDir, 'in.bin')), data);

      await writeFile(join(sessionDir, 'out.bin'), 'result\n');
      const s = new Stager({
        config: stagingConfig(),
        credentials: mapCredentials({}, { '/CN=job owner': pki.alice }),
        certDir,
      });
      const o = await s.stageOut(
        {
          id: 'gsi-out',
          owner: '/CN=job owner',
          sessionDir,
          outcome: 'success',
          files: [
            { name: 'out.bin', target: xrd.url('gsi-out.bin'), when: { success: true, failure: false, cancel: false } },
          ],
        },
        never,
      );
      assert.equal(o.ok, true, o.failureReason);
      assert.equal(await readFile(xrd.path('gsi-out.bin'), 'utf8'), 'result\n');
    });

    it("a job's concurrent first transfers share one helper and one folder, both gone after the stage-in", async (t) => {
      // Four transfers start at once on a fresh helper while the proxy file is written:
      // each used to start a helper process and make a folder of its own, and all but
      // the last were left behind (the processes running, the folders with a proxy copy).
      const names = Array.from({ length: 12 }, (_, i) => `many${i}.bin`);
      for (const name of names) await xrd.put(name, data.subarray(0, 1000));
      const own = await mkdtemp(join(dir, 'tmp-'));
      const saved = process.env['TMPDIR'];
      process.env['TMPDIR'] = own; // the helpers' folders are made under tmpdir()
      t.after(() => {
        if (saved === undefined) delete process.env['TMPDIR'];
        else process.env['TMPDIR'] = saved;
      });
      const seen = new Set<number>();
      const sessionDir = join(dir, `s${n++}`);
      await mkdir(sessionDir);
      const r = await new Stager({
        config: stagingConfig({ cache: { enabled: false }, maxTransfersPerJob: 4 }),
        credentials: mapCredentials({}, { '/CN=job owner': pki.alice }),
        certDir,
      }).stageIn(
        { id: 'many', owner: '/CN=job owner', sessionDir, files: names.map((name) => input(name, xrd.url(name))) },
        never,
        () => void gfal2HelperPids().then((pids) => pids.forEach((p) => seen.add(p))),
      );
      assert.equal(r.ok, true, r.failureReason);
      assert.ok(seen.size <= 1, `helper processes seen during one job's stage-in: ${seen.size}`);
      await until(
        async () => (await gfal2HelperPids()).length === 0,
        'no gfal2 helper left after the stage-in',
        15_000,
      );
      assert.deepEqual(await readdir(own), [], 'no helper folder left behind');
    });

    it('a proxy from a CA the server does not trust is refused: FAILED naming the URL, nothing of the proxy shown', async () => {
      const { r, logger } = await stage(stranger.alice, [input('x.bin', xrd.url('gsi.bin'))]);
      assert.equal(r.ok, false);
      assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_NO_CREDENTIAL');
      assert.match(r.failureReason ?? '', /gsi\.bin.*authentication failed.*not accepted/);
      assert.equal(r.files[0]?.attempts, 1, 'a refused credential is not retried');
      for (const text of [r.failureReason ?? '', logger.text()]) {
        assert.doesNotMatch(text, /BEGIN|PRIVATE|gsiusrpxy|proxy\.pem/);
      }
    });

    it('a job without a credential is refused too, not served anonymously', async () => {
      const { r } = await stage(undefined, [input('x.bin', xrd.url('gsi.bin'))]);
      assert.equal(r.ok, false);
      assert.match(r.failureReason ?? '', /gsi\.bin.*authentication failed/);
    });

    describe("another identity's proxy left in the job account's default place is never used", () => {
      // A pool or shared account: an earlier job of another user left its proxy where
      // gfal2 and the xrootd security library look by default (/tmp/x509up_u<uid>). A
      // job of this account without a proxy of its own (none delegated, or a token)
      // must not authenticate with it.
      let planted: string;
      let sessionOwner: { uid: number; gid: number };
      before(async () => {
        sessionOwner = createAccount();
        planted = `/tmp/x509up_u${sessionOwner.uid}`;
        await writeFile(planted, `${pki.alice.certChainPem.trim()}\n${pki.alice.keyPem.trim()}\n`, { mode: 0o600 });
        await chown(planted, sessionOwner.uid, sessionOwner.gid);
      });
      after(async () => {
        await rm(planted, { force: true });
        removeAccounts();
      });
      const stageAsAccount = async (credential: Credential | undefined) => {
        const sessionDir = join(dir, `s${n++}`);
        await mkdir(sessionDir, { mode: 0o700 });
        await chown(sessionDir, sessionOwner.uid, sessionOwner.gid);
        const s = new Stager({
          config: stagingConfig({ cache: { enabled: false }, retry: { maxAttempts: 1 } }),
          credentials: mapCredentials({}, { '/CN=job owner': credential }),
          certDir,
          logger: recordingLogger(),
        });
        const r = await s.stageIn(
          { id: `p${n}`, owner: '/CN=job owner', sessionDir, files: [input('x.bin', xrd.url('gsi.bin'))] },
          never,
        );
        return { r, sessionDir };
      };

      it('the planted proxy is valid and the server accepts it (the probe below means something)', async () => {
        const { r } = await stageAsAccount(pki.alice);
        assert.equal(r.ok, true, r.failureReason);
      });

      for (const [what, credential] of [
        ['no credential', undefined],
        ['a token only', { kind: 'jwt', token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' }],
      ] as const) {
        it(`a job with ${what} fails with a credential reason; nothing is staged`, async () => {
          const { r, sessionDir } = await stageAsAccount(credential);
          assert.equal(r.ok, false, 'staged with the proxy of another identity');
          assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_NO_CREDENTIAL', r.failureReason);
          assert.match(r.failureReason ?? '', /gsi\.bin.*authentication failed/);
          assert.deepEqual(await readdir(sessionDir), []);
        });
      }
    });
  },
);
