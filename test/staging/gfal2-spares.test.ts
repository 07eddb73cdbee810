// Warm gfal2 helpers (src/staging/gfal2/spares.ts) and what binding one to a job must
// keep: a spare holds nothing of any job and no job's account can reach it; a bound
// helper runs as its job's account only (no other group), cannot be read even by that
// account's other processes, is its job's alone and ends with it; the service writes
// nothing through a link the job's account planted in the helper's folder. Real
// processes, real accounts, a real xrootd server (anonymous).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import { Gfal2Helper } from '../../src/staging/gfal2/helper.js';
import { Gfal2Limits } from '../../src/staging/gfal2/limits.js';
import { Gfal2Spares } from '../../src/staging/gfal2/spares.js';
import { Gfal2Pool, gfal2Download } from '../../src/staging/gfal2/transfers.js';
import type { StageInFile, StageResult } from '../../src/staging/types.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { makePki, never, stagingConfig, tempDir, type TestPki } from './helpers/fixtures.js';
import { XrootdServer, gfal2HelperPids, xrootdAvailable } from './helpers/xrootd.js';
import {
  assertRoot,
  catAs,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';
import { until } from '../helpers/poll.js';

const available = xrootdAvailable();
if (!available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('xrootd, gfal2 and root are needed here (CERES_REQUIRE_GFAL2=1)');

const settings = { connectSeconds: 5, idleSeconds: 10 };
const gone = (pid: number): Promise<boolean> =>
  stat(`/proc/${pid}`).then(
    () => false,
    () => true,
  );
const status = (pid: number): Promise<string> => readFile(`/proc/${pid}/status`, 'utf8');
const field = (text: string, name: string): string[] =>
  (new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);

describe(
  'gfal2 spare helpers and their bind to one job',
  {
    skip:
      (!available && 'needs root, xrootd-server and python3-gfal2') || skipUnlessRoot('binding helpers to accounts'),
  },
  () => {
    let xrd: XrootdServer;
    let acct: TestAccount;
    let other: TestAccount;
    let pki: TestPki;
    let pkiDir: string;
    const data = randomBytes(5_000);
    before(async () => {
      assertRoot();
      acct = createAccount();
      other = createAccount();
      xrd = await XrootdServer.start();
      for (let i = 0; i < 6; i++) await xrd.put(`f${i}.bin`, data);
      pkiDir = await mkdtemp(join(tmpdir(), 'ceres-spares-pki-'));
      pki = await makePki(pkiDir);
    });
    after(async () => {
      await xrd?.stop();
      removeAccounts();
      if (pkiDir !== undefined) await rm(pkiDir, { recursive: true, force: true });
    });

    /** A session directory of `a` (0700 in a 0711 folder), as submission makes it. */
    const sessionOf = async (t: Parameters<typeof tempDir>[0], a: TestAccount): Promise<string> => {
      const root = await tempDir(t);
      await chmod(root, 0o711);
      const s = join(root, 'session');
      await mkdir(s, { mode: 0o700 });
      await chown(s, a.uid, a.gid);
      return s;
    };
    const loaded = async (spares: Gfal2Spares): Promise<number> => {
      await until(async () => {
        const [pid] = spares.idlePids;
        return pid !== undefined && (await gfal2HelperPids('spare')).includes(pid);
      }, 'a spare with gfal2 loaded');
      return spares.idlePids[0] as number;
    };

    it("a spare holds no credential, no job's folder and no file; no job's account can read it", async (t) => {
      const spares = new Gfal2Spares(settings, 1);
      t.after(() => spares.close());
      spares.refill();
      const pid = await loaded(spares);
      const st = await status(pid);
      assert.deepEqual(field(st, 'Uid'), Array(4).fill(String(process.getuid?.())), "the service's account");
      const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
      assert.deepEqual(
        environ.filter((e) => /^(X509_USER_PROXY|X509_USER_CERT|X509_USER_KEY|BEARER_TOKEN)=/.test(e)),
        [],
        'no credential in its environment',
      );
      assert.ok(environ.includes('HOME=/'), 'no home of any account');
      assert.equal(await readlink(`/proc/${pid}/cwd`), '/', "no job's folder");
      const fds = await Promise.all(
        (await readdir(`/proc/${pid}/fd`)).map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')),
      );
      assert.deepEqual(
        fds.filter((f) => f.startsWith('/') && f !== '/dev/null' && !f.startsWith('/dev/urandom')),
        [],
        `no file held open: ${fds.join(', ')}`,
      );
      for (const f of ['environ', 'mem', 'fd/0'])
        assert.notEqual(catAs(acct, `/proc/${pid}/${f}`), '', `${f} unreadable`);
      await spares.close();
      await until(() => gone(pid), 'the spare ended with the stager');
    });

    it("a bound helper runs as the job's account, no other group, unreadable even by that account; it ends with its job", async (t) => {
      const spares = new Gfal2Spares(settings, 1);
      t.after(() => spares.close());
      spares.refill();
      const spare = await loaded(spares);
      const helper = new Gfal2Helper({
        owner: { uid: acct.uid, gid: acct.gid },
        credential: pki.alice,
        workers: 2,
        spares,
      });
      const r = await helper.request({ op: 'stat', url: xrd.url('f0.bin') }, 30_000, never);
      assert.equal(r['size'], data.length);
      assert.deepEqual(await gfal2HelperPids('job'), [spare], 'the spare was bound');
      const st = await status(spare);
      assert.deepEqual(field(st, 'Uid'), Array(4).fill(String(acct.uid)));
      assert.deepEqual(field(st, 'Gid'), Array(4).fill(String(acct.gid)));
      assert.deepEqual(field(st, 'Groups'), [], 'no supplementary group (not root, not the service)');
      // Non-dumpable: neither the job's own account (another of its processes) nor another
      // account can read its memory or environment, or trace it.
      for (const who of [acct, other])
        for (const f of ['environ', 'mem'])
          assert.match(catAs(who, `/proc/${spare}/${f}`), /Permission denied/, `${who.name}: ${f}`);
      const work = await helper.workDir();
      const [proxy] = (await readdir(work)).filter((n) => n.startsWith('proxy'));
      assert.ok(proxy !== undefined, 'the proxy was written at the bind');
      const ps = await lstat(join(work, proxy));
      assert.equal(ps.uid, acct.uid);
      assert.equal(ps.mode & 0o777, 0o600, 'the proxy is for its account only');
      assert.notEqual(catAs(other, join(work, proxy)), '', 'another account cannot read the proxy');
      // The next job's spare starts when this job's transfers end, not beside them.
      assert.deepEqual(spares.idlePids, [], 'no spare started beside the bound helper');
      await helper.close();
      await until(() => gone(spare), 'the bound helper ended with its job');
      await assert.rejects(stat(work), /ENOENT/, 'its folder, with the proxy, is gone');
      await until(() => spares.idlePids.length === 1, 'a new spare started once the job ended');
      assert.notEqual(spares.idlePids[0], spare);
      await spares.loaded();
    });

    it('each job binds a helper of its own, under its own account, ended with it; spares end with the stager', async (t) => {
      const stager = new Stager({
        config: stagingConfig({ cache: { enabled: false }, maxTransfersPerJob: 2, gfal2: { spareHelpers: 1 } }),
        credentials: anonymousCredentials,
      });
      t.after(() => stager.close());
      const files: StageInFile[] = [0, 1, 2].map((i) => ({
        name: `f${i}.bin`,
        source: xrd.url(`f${i}.bin`),
        executable: false,
      }));
      const job = async (id: string, a: TestAccount): Promise<void> => {
        const sessionDir = await sessionOf(t, a);
        const r = await stager.stageIn({ id, owner: `/CN=${a.name}`, sessionDir, files }, never);
        assert.equal(r.ok, true, r.failureReason);
        assert.deepEqual(await readFile(join(sessionDir, 'f2.bin')), data);
      };
      // The server stopped (SIGSTOP) holds the jobs' transfers, and so their helpers, to be looked at.
      const held = async (n: number, jobs: () => Promise<void>[]): Promise<Map<number, string>> => {
        process.kill(xrd.pid, 'SIGSTOP');
        let running: Promise<void[]> | undefined;
        try {
          running = Promise.all(jobs());
          await until(async () => (await gfal2HelperPids('job')).length === n, `${n} job helpers`);
          const pids = await gfal2HelperPids('job');
          return new Map(
            await Promise.all(pids.map(async (p) => [p, field(await status(p), 'Uid')[0] ?? ''] as const)),
          );
        } finally {
          process.kill(xrd.pid, 'SIGCONT');
          await running;
        }
      };
      const first = await held(1, () => [job('one', acct)]);
      const [a] = first.keys();
      await until(() => gone(a as number), "the first job's helper ended with it");
      const spare = stager.spareHelperPids();
      assert.equal(spare.length, 1, 'a spare waits for the next job');
      const second = await held(1, () => [job('two', acct)]);
      assert.deepEqual([...second.keys()], spare, 'the second job bound the spare, not the first job helper');
      assert.deepEqual([...second.values()], [String(acct.uid)]);
      const both = await held(2, () => [job('three', acct), job('four', other)]);
      assert.deepEqual(
        [...both.values()].sort(),
        [String(acct.uid), String(other.uid)].sort(),
        'two jobs at once: two helpers, each under its own account',
      );
      await until(async () => (await gfal2HelperPids('job')).length === 0, 'no job helper left');
      const idle = stager.spareHelperPids();
      assert.equal(idle.length, 1, 'one spare kept');
      await stager.close();
      await until(() => gone(idle[0] as number), 'the spare ended with the stager');
      assert.deepEqual(await gfal2HelperPids('any'), []);
    });

    it('a spare that died while idle is passed over: the next job binds one started for it', async (t) => {
      const stager = new Stager({
        config: stagingConfig({ cache: { enabled: false }, gfal2: { spareHelpers: 1 } }),
        credentials: anonymousCredentials,
      });
      t.after(() => stager.close());
      const files: StageInFile[] = [{ name: 'f0.bin', source: xrd.url('f0.bin'), executable: false }];
      const run = (id: string): Promise<StageResult> =>
        sessionOf(t, acct).then((sessionDir) =>
          stager.stageIn({ id, owner: `/CN=${acct.name}`, sessionDir, files }, never),
        );
      const first = await run('before');
      assert.equal(first.ok, true, first.failureReason);
      await until(() => stager.spareHelperPids().length === 1, 'a spare');
      const [spare] = stager.spareHelperPids();
      process.kill(spare as number, 'SIGKILL');
      await until(() => gone(spare as number), 'the spare killed');
      const r = await run('after');
      assert.equal(r.ok, true, r.failureReason);
      assert.equal(r.files[0]?.attempts, 1, 'no attempt lost to the dead spare');
    });

    it('the proxy is never written through a link the job account planted in the helper folder', async (t) => {
      const spares = new Gfal2Spares(settings, 0);
      t.after(() => spares.close());
      const helper = new Gfal2Helper({
        owner: { uid: acct.uid, gid: acct.gid },
        credential: pki.alice,
        workers: 1,
        spares,
      });
      t.after(() => helper.close());
      const dir = await tempDir(t);
      const target = join(dir, 'service-secret');
      await writeFile(target, 'the service only\n', { mode: 0o600 });
      const work = await helper.workDir();
      // Every name the proxy has had; the folder is the account's, so it could.
      for (const name of ['proxy.pem', 'proxy-1.pem']) await symlink(target, join(work, name));
      await assert.rejects(helper.request({ op: 'stat', url: xrd.url('f0.bin') }, 30_000, never));
      assert.equal(await readFile(target, 'utf8'), 'the service only\n', 'not overwritten');
      const ts = await stat(target);
      assert.equal(ts.uid, 0, 'not given to the account');
      assert.equal(ts.mode & 0o777, 0o600);
    });

    it("a download the job account swapped for a link is refused; the link's target keeps its owner and mode", async (t) => {
      const spares = new Gfal2Spares(settings, 0);
      const cfg = stagingConfig();
      const pool = new Gfal2Pool(cfg, new Gfal2Limits(4, 4), spares);
      const dir = await tempDir(t);
      const target = join(dir, 'service-secret');
      await writeFile(target, 'the service only\n', { mode: 0o600 });
      const work = await tempDir(t);
      // Stands for the helper and, in the window after its copy, a process of the job's
      // account swapping the file it wrote for a link (its folder is the account's). The
      // helper's own look (a regular file of the mode asked) is not taken from a helper
      // of a job's account: the service looks again, through a descriptor.
      const swapping = {
        asService: false,
        workDir: () => Promise.resolve(work),
        fileName: () => 'in-swapped-1',
        downloads: { answered: 0, largest: 0 },
        request: async (req: Record<string, unknown>) => {
          await symlink(target, String(req['dst']).slice('file://'.length));
          return { ok: true, size: 17, mode: 0o644, regular: true };
        },
      } as unknown as Gfal2Helper;
      const dest = join(dir, 'in.bin.ceres-part-0000');
      await assert.rejects(
        gfal2Download(
          pool,
          swapping,
          new URL(xrd.url('f0.bin')),
          dest,
          { algorithms: [], onProgress: () => undefined, mode: 0o644 },
          never,
        ),
        (e: unknown) => isCeError(e) && e.code === 'CE_ERR_STAGING_UNSAFE_PATH',
      );
      const ts = await stat(target);
      assert.equal(ts.mode & 0o777, 0o600, 'the target was not made readable');
      assert.equal(await readFile(target, 'utf8'), 'the service only\n');
      await assert.rejects(lstat(dest), /ENOENT/, 'the link moved to the destination was removed');
    });
  },
);
