// The cleanup of a pool account before its lease passes on (src/accounts/account-cleanup.ts),
// with real accounts and processes, as root: every process of the account ends (a daemon in
// a session of its own included), what it owns in the shared temporary folders goes (links
// removed, never followed), and nothing of another account or of root is touched; what
// cannot be cleaned fails with a reason. Then through the pool: the next identity gets the
// account only after all of that.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanUpAccount, processesOf } from '../../src/accounts/account-cleanup.js';
import { PoolLeases } from '../../src/authz/pool-leases.js';
import { openDatabase } from '../../src/store/database.js';
import { CeError } from '../../src/errors/ce-error.js';
import { until } from '../lrms/backend.case.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe('pool account cleanup', { skip: skipUnlessRoot('cleaning up local accounts') }, () => {
  let a: TestAccount;
  let b: TestAccount;
  let dir = '';
  let folders: string[] = [];
  const started: number[] = [];

  before(async () => {
    assertRoot();
    a = createAccount();
    b = createAccount();
    dir = await mkdtemp(join(tmpdir(), 'ceres-cleanup-'));
    await chmod(dir, 0o755);
    // Stand-ins for /tmp, /var/tmp, /dev/shm: world-writable with the sticky bit, like them.
    folders = ['tmp', 'vartmp', 'shm'].map((f) => join(dir, f));
    for (const f of [...folders, join(dir, 'pids')]) {
      await mkdir(f);
      await chmod(f, 0o1777);
    }
  });
  after(async () => {
    for (const p of started) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    removeAccounts();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Run `script` as `who` in `cwd`; resolves with its exit code. */
  function as(who: TestAccount, script: string, cwd = dir): Promise<number> {
    return new Promise((resolve, reject) => {
      const c = spawn('/bin/sh', ['-c', script], { uid: who.uid, gid: who.gid, cwd, stdio: 'ignore' });
      c.on('error', reject);
      c.on('close', (code) => resolve(code ?? -1));
    });
  }

  /** A daemon of `who` in a session of its own, left running; its pid. */
  async function daemon(who: TestAccount): Promise<number> {
    const pidFile = join(dir, 'pids', `d-${who.name}-${started.length}`);
    await as(who, `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 1000' > /dev/null 2>&1 &`, dir);
    await until('the daemon', () => existsSync(pidFile) && /^\d+\n$/.test(readFileSync(pidFile, 'utf8')));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    started.push(pid);
    return pid;
  }

  const alive = (pid: number): boolean => {
    try {
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      return state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  };

  /** Files and folders of `who` in every folder (one locked away with mode 000). */
  async function litter(who: TestAccount, tag: string): Promise<string[]> {
    const made: string[] = [];
    for (const f of folders) {
      assert.equal(
        await as(
          who,
          `echo x > ${f}/${tag}-file && mkdir -p ${f}/${tag}-dir/deep && echo y > ${f}/${tag}-dir/deep/z && chmod 000 ${f}/${tag}-dir/deep`,
        ),
        0,
      );
      made.push(join(f, `${tag}-file`), join(f, `${tag}-dir`));
    }
    return made;
  }

  it("ends every process of the account and removes its files, and touches nobody else's", async () => {
    const mine = [await daemon(a), await daemon(a)];
    const theirs = await daemon(b);
    const files = await litter(a, 'a');
    const others = await litter(b, 'b');
    const rootFile = join(folders[0] ?? '', 'root-file');
    await writeFile(rootFile, 'root\n');
    // A link of the account to another account's file: removed, its target kept.
    assert.equal(await as(a, `ln -s ${join(folders[0] ?? '', 'b-file')} ${folders[0]}/a-link`), 0);
    await cleanUpAccount(a.name, { folders });
    for (const p of mine) assert.ok(!alive(p), `process ${p} of the account ended`);
    assert.deepEqual(await processesOf(a.uid), []);
    assert.ok(alive(theirs), "another account's process runs on");
    for (const f of files) assert.ok(!existsSync(f), `${f} removed`);
    assert.ok(!existsSync(join(folders[0] ?? '', 'a-link')));
    for (const f of others) assert.ok(existsSync(f), `${f} of another account kept`);
    assert.equal(readFileSync(rootFile, 'utf8'), 'root\n');
    assert.equal(readFileSync(join(folders[0] ?? '', 'b-file'), 'utf8'), 'x\n', 'the link target is kept');
  });

  it('an account folder holding another user’s file cannot be removed: the cleanup fails and says what is left', async () => {
    const f = folders[1] ?? '';
    assert.equal(await as(a, `mkdir ${f}/shared && chmod 777 ${f}/shared`), 0);
    assert.equal(await as(b, `echo b > ${f}/shared/theirs`), 0);
    await assert.rejects(
      cleanUpAccount(a.name, { folders }),
      (e: unknown) =>
        e instanceof CeError && e.code === 'CE_ERR_ACCOUNT_CLEANUP_FAILED' && e.message.includes(`${f}/shared`),
    );
    assert.ok(existsSync(join(f, 'shared', 'theirs')), "the other user's file is kept");
    await rm(join(f, 'shared'), { recursive: true });
  });

  for (const [what, name, code] of [
    ['an account that does not exist', 'nosuchacct-ceres', 'CE_ERR_ACCOUNT_UNKNOWN'],
    ['a name that is not an account name', '../etc', 'CE_ERR_ACCOUNT_UNKNOWN'],
    ['root', 'root', 'CE_ERR_ACCOUNT_REFUSED'],
  ] as const) {
    it(`${what}: refused with ${code}, nothing killed or removed`, async () => {
      const rootFile = join(folders[2] ?? '', `keep-${name.replaceAll('/', '_')}`);
      await writeFile(rootFile, 'root\n');
      await assert.rejects(cleanUpAccount(name, { folders }), (e: unknown) => e instanceof CeError && e.code === code);
      assert.ok(existsSync(rootFile));
    });
  }

  /** A pool of account a with the real cleanup, leased to /CN=first; cleanups' ends (undefined: success) in `ended`. */
  function leasedPool(name: string) {
    const db = openDatabase(join(dir, `${name}.db`));
    const clock = { t: 0 };
    const ended: unknown[] = [];
    const l = new PoolLeases(db, {
      now: () => clock.t,
      clean: (account) => cleanUpAccount(account, { folders }),
      onCleaned: (_account, error) => ended.push(error),
    });
    const pool = { accounts: [a.name], idleMs: 1000 };
    assert.equal(l.lease(pool, '/CN=first'), a.name);
    return { db, l, clock, ended, pool };
  }

  it('through the pool: the next identity gets the account only once its processes and files are gone', async () => {
    const { db, l, clock, ended, pool } = leasedPool('leases');
    let grantedWith: { processes: number[]; files: boolean } | undefined;
    const files = () => existsSync(join(folders[0] ?? '', 'p-file'));
    await daemon(a);
    await litter(a, 'p');
    clock.t = 5000;
    assert.equal(l.lease(pool, '/CN=second'), undefined, 'not before the cleanup');
    await until('the account to pass on', async () => {
      if (l.lease(pool, '/CN=second') !== a.name) return false;
      grantedWith = { processes: await processesOf(a.uid), files: files() };
      return true;
    });
    assert.deepEqual(grantedWith, { processes: [], files: false }, 'nothing of the first identity was left');
    assert.deepEqual(ended, [undefined]);
    db.close();
  });

  it('through the pool: a cleanup that fails never hands the account on', async () => {
    const { db, l, clock, ended, pool } = leasedPool('leases-fail');
    const f = folders[1] ?? '';
    assert.equal(await as(a, `mkdir ${f}/stuck && chmod 777 ${f}/stuck`), 0);
    assert.equal(await as(b, `echo b > ${f}/stuck/theirs`), 0);
    clock.t = 5000;
    assert.equal(l.lease(pool, '/CN=second'), undefined);
    await until('the cleanup to fail', () => ended.length === 1);
    assert.ok(ended[0] instanceof CeError && ended[0].code === 'CE_ERR_ACCOUNT_CLEANUP_FAILED');
    clock.t += 60_000;
    assert.equal(l.lease(pool, '/CN=second'), undefined, 'still out of the pool (the sweep tries again)');
    await until('the second attempt to fail', () => ended.length === 2);
    await rm(join(f, 'stuck'), { recursive: true });
    clock.t += 60_000;
    assert.equal(l.lease(pool, '/CN=second'), undefined);
    await until('the third attempt to succeed', () => ended.length === 3);
    assert.equal(ended[2], undefined);
    assert.equal(l.lease(pool, '/CN=second'), a.name);
    db.close();
  });
});
