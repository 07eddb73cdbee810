// s3:// staging with the site's keys per endpoint (staging.gfal2.s3Endpoints), through
// gfal2's http plugin against a fake S3 server of this file (loopback, plain http: no S3
// server can be installed here, so the signing is checked only as far as the access key
// id in the signed query). What is checked: the keys reach the helper's environment, the
// helper runs as the service's account (never the job's, whose processes could read it),
// and the keys appear nowhere else: not on the helper's command line, not in the log, not
// in the job's errors. An endpoint without keys, and a restricted endpoint named by a
// dynamic output list, are refused before any request.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import { s3KeyFileProblems, S3Endpoints } from '../../src/staging/gfal2/s3-endpoints.js';
import type { StagingConfig } from '../../src/config/sections/staging.js';
import { never, recordingLogger, stagingConfig, tempDir } from './helpers/fixtures.js';
import { gfal2HelperPids } from './helpers/xrootd.js';
import { spawnSync } from 'node:child_process';
import { createAccount, removeAccounts, type TestAccount } from '../helpers/local-accounts.js';

const ACCESS = 'AKIDCERESTEST0001';
const SECRET = 'sEcReT-0f-the-site-' + randomBytes(8).toString('hex');

const s3Available =
  process.geteuid?.() === 0 &&
  spawnSync('/usr/bin/python3', [
    '-c',
    'import gfal2,sys; sys.exit(0 if any(p.startswith("http") for p in gfal2.creat_context().get_plugin_names()) else 1)',
  ]).status === 0;
if (!s3Available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('python3-gfal2 with its http plugin and root are needed here (CERES_REQUIRE_GFAL2=1)');

type Endpoint = StagingConfig['gfal2']['s3Endpoints'][number];

describe('S3 endpoints and their key files (no server)', () => {
  const ep = (host: string, allowGroups?: string[]): Endpoint => ({
    host,
    accessKeyFile: '/nonexistent',
    secretKeyFile: '/nonexistent',
    region: 'us-east-1',
    pathStyle: true,
    ...(allowGroups === undefined ? {} : { allowGroups }),
  });
  const s3 = new S3Endpoints([ep('s3.example.org'), ep('store.example.org:9000', ['atlas'])]);

  it('matches host and port exactly as configured', () => {
    assert.equal(s3.refusal(new URL('s3s://S3.example.org/b/k'), []), undefined);
    assert.match(s3.refusal(new URL('s3s://s3.example.org:8443/b/k'), []) ?? '', /no S3 keys .*s3\.example\.org:8443/);
    assert.match(s3.refusal(new URL('s3://store.example.org/b/k'), ['atlas']) ?? '', /no S3 keys/);
    assert.match(s3.refusal(new URL('s3://evil.example.org/b/k'), []) ?? '', /no S3 keys .*evil\.example\.org/);
  });

  it('serves a restricted endpoint to its groups only, and never to a dynamic output list', () => {
    const url = new URL('s3://store.example.org:9000/b/k');
    assert.equal(s3.refusal(url, ['cms', 'atlas']), undefined);
    assert.match(s3.refusal(url, ['cms']) ?? '', /not open to the caller's authorization groups/);
    assert.match(s3.refusal(url, undefined) ?? '', /dynamic output list/);
  });

  it('config check: a key file others can read, a missing and an empty one are named; 0600 passes', async (t) => {
    const dir = await tempDir(t);
    const good = join(dir, 'good');
    const open = join(dir, 'open');
    const empty = join(dir, 'empty');
    await writeFile(good, `${ACCESS}\n`, { mode: 0o600 });
    await writeFile(open, `${SECRET}\n`, { mode: 0o600 });
    await chmod(open, 0o644);
    await writeFile(empty, '\n', { mode: 0o600 });
    const problems = await s3KeyFileProblems([
      { ...ep('a.example.org'), accessKeyFile: good, secretKeyFile: open },
      { ...ep('b.example.org'), accessKeyFile: join(dir, 'missing'), secretKeyFile: empty },
    ]);
    assert.deepEqual(
      problems.map((p) => p.key),
      [
        'staging.gfal2.s3Endpoints.0.secretKeyFile',
        'staging.gfal2.s3Endpoints.1.accessKeyFile',
        'staging.gfal2.s3Endpoints.1.secretKeyFile',
      ],
    );
    assert.match(problems[0]?.message ?? '', /mode 0644, readable by others/);
    assert.match(problems[1]?.message ?? '', /does not exist/);
    assert.match(problems[2]?.message ?? '', /empty/);
    assert.doesNotMatch(JSON.stringify(problems), new RegExp(SECRET));
  });
});

describe(
  's3:// staging through gfal2 with the keys of the endpoint',
  { skip: !s3Available && 'needs root and python3-gfal2 with its http plugin' },
  () => {
    let server: Server;
    let port: number;
    let dir: string;
    const seen: string[] = [];
    const body = randomBytes(20_000);
    /** While set, GETs wait for it: the helper is alive and can be looked at. */
    let hold: Promise<void> | undefined;
    let acct: TestAccount;
    before(async () => {
      acct = createAccount();
      server = createServer((req, res) => {
        seen.push(`${req.method} ${req.url ?? ''} ${req.headers.authorization ?? ''}`);
        const credential = new URL(req.url ?? '/', 'http://x').searchParams.get('X-Amz-Credential') ?? '';
        const auth = req.headers.authorization ?? '';
        if (!credential.startsWith(`${ACCESS}/`) && !auth.includes(ACCESS)) {
          res.writeHead(403).end();
          return;
        }
        if (req.url?.startsWith('/bucket/missing')) {
          res.writeHead(404).end();
          return;
        }
        const send = (): void => {
          res.writeHead(200, { 'content-length': String(body.length) });
          res.end(req.method === 'HEAD' ? undefined : body);
        };
        if (req.method === 'GET' && hold !== undefined) void hold.then(send);
        else send();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    after(async () => {
      await new Promise<void>((r) => server.close(() => r()));
      removeAccounts();
    });

    const keyFiles = async (t: { after: (fn: () => Promise<void>) => void }, access = ACCESS) => {
      dir = await tempDir(t);
      const accessKeyFile = join(dir, 'access');
      const secretKeyFile = join(dir, 'secret');
      await writeFile(accessKeyFile, `${access}\n`, { mode: 0o600 });
      await writeFile(secretKeyFile, `${SECRET}\n`, { mode: 0o600 });
      return { accessKeyFile, secretKeyFile };
    };
    const stager = (endpoints: Endpoint[], logger = recordingLogger()) =>
      new Stager({
        config: stagingConfig({ retry: { maxAttempts: 1 }, gfal2: { s3Endpoints: endpoints } }),
        credentials: anonymousCredentials,
        logger,
      });
    /** A stage-in of the fake server's `bucket/k.bin` as the session's `k.bin`. */
    const stageKey = (s: Stager, id: string, sessionDir: string) =>
      s.stageIn(
        {
          id,
          owner: '/CN=a',
          sessionDir,
          files: [{ name: 'k.bin', source: `s3://127.0.0.1:${port}/bucket/k.bin`, executable: false }],
        },
        never,
      );
    const session = async (t: { after: (fn: () => Promise<void>) => void }) => {
      const s = join(await tempDir(t), 'session');
      await mkdir(s);
      return s;
    };
    const endpoint = (
      files: { accessKeyFile: string; secretKeyFile: string },
      host = `127.0.0.1:${port}`,
    ): Endpoint => ({
      host,
      ...files,
      region: 'us-east-1',
      pathStyle: true,
    });

    it("downloads with the endpoint's keys, handed to the helper on its stdin only: not its command line, its environment, the log or the results", async (t) => {
      const files = await keyFiles(t);
      const logger = recordingLogger();
      const s = stager([endpoint(files)], logger);
      // The job's session belongs to its local account: other protocols' helpers run as that
      // account; this one must not, or the job's own processes could read the keys.
      const root = await tempDir(t);
      await chmod(root, 0o711);
      const sessionDir = join(root, 'session');
      await mkdir(sessionDir, { mode: 0o700 });
      await chown(sessionDir, acct.uid, acct.gid);
      let release: () => void = () => undefined;
      hold = new Promise<void>((r) => (release = r));
      t.after(() => {
        hold = undefined;
        release();
      });
      const staged = stageKey(s, 's3', sessionDir);
      // The helper is waiting for the server's answer: look at it.
      const pid = await untilOne(gfal2HelperPids);
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      release();
      const r = await staged;
      assert.equal(r.ok, true, r.failureReason);
      assert.deepEqual(await readFile(join(sessionDir, 'k.bin')), body);
      // The keys came in the bind line on the helper's stdin, after it was started (as a spare).
      assert.ok(!environ.includes(SECRET) && !environ.includes(ACCESS), "no key in the helper's initial environment");
      assert.ok(!cmdline.includes(SECRET) && !cmdline.includes(ACCESS), 'no key on the command line');
      assert.match(status, new RegExp(`^Uid:\\s+${process.getuid?.() ?? 0}\\s`, 'm'), "the service's account");
      assert.equal((await stat(join(sessionDir, 'k.bin'))).uid, acct.uid, "the input is the job account's file");
      assert.ok(
        seen.some((l) => l.includes(ACCESS)),
        'the server saw requests signed with the access key',
      );
      assert.ok(!seen.some((l) => l.includes(SECRET)), 'the secret never travels');
      for (const text of [logger.text(), JSON.stringify(r)]) {
        assert.doesNotMatch(text, new RegExp(SECRET));
        assert.doesNotMatch(text, new RegExp(ACCESS));
      }
    });

    it('a refusal by the server fails the file naming the URL, without the keys', async (t) => {
      const files = await keyFiles(t, 'AKIDWRONGKEY0002');
      const logger = recordingLogger();
      const r = await stageKey(stager([endpoint(files)], logger), 's3-403', await session(t));
      assert.equal(r.ok, false);
      assert.match(r.failureReason ?? '', new RegExp(`s3://127\\.0\\.0\\.1:${port}/bucket/k\\.bin.*permission denied`));
      for (const text of [logger.text(), JSON.stringify(r)]) {
        assert.doesNotMatch(text, new RegExp(SECRET));
        assert.doesNotMatch(text, /AKIDWRONGKEY0002/);
      }
    });

    it('an endpoint without keys is refused before any request, naming the endpoint', async (t) => {
      const files = await keyFiles(t);
      const before = seen.length;
      const r = await stageKey(stager([endpoint(files, 'other.example.org')]), 's3-none', await session(t));
      assert.equal(r.ok, false);
      assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_NO_CREDENTIAL');
      assert.match(
        r.failureReason ?? '',
        new RegExp(`no S3 keys are configured for the endpoint 127\\.0\\.0\\.1:${port}`),
      );
      assert.equal(seen.length, before, 'no request reached the server');
    });

    it('a dynamic output list, written by the job after submission, cannot send to a restricted endpoint', async (t) => {
      const files = await keyFiles(t);
      const sessionDir = await session(t);
      await writeFile(join(sessionDir, 'out.bin'), 'result\n');
      await writeFile(join(sessionDir, 'list'), `out.bin s3://127.0.0.1:${port}/bucket/listed.bin\n`);
      const before = seen.length;
      const r = await stager([{ ...endpoint(files), allowGroups: ['atlas'] }]).stageOut(
        {
          id: 's3-list',
          owner: '/CN=a',
          sessionDir,
          outcome: 'success',
          files: [{ name: '@list', when: { success: true, failure: false, cancel: false } }],
        },
        never,
      );
      assert.equal(r.ok, false);
      assert.match(r.failureReason ?? '', /restricted to authorization groups.*dynamic output list/);
      assert.equal(seen.length, before, 'no request reached the server');
    });
  },
);

async function untilOne(get: () => Promise<number[]>): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [pid] = await get();
    if (pid !== undefined) return pid;
    if (Date.now() > deadline) throw new Error('no gfal2 helper appeared');
    await new Promise((r) => setTimeout(r, 20));
  }
}
