// What a fork job under a local account learns about others, and what it leaves behind
// (docs/security.md, "Private temporary folders" and "What `ps` shows"), with real
// accounts: the job wrapper's arguments are not on its command line, so another
// account's job sees no job id or session path with ps or in /proc; each job has its own
// /tmp, /var/tmp and /dev/shm, which no other job sees and which go with the job, while
// the host's stay untouched. The state directory is outside /tmp here: a job whose
// session lies in a shared temporary folder keeps the shared folders (tested too).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkBackend } from '../../src/lrms/fork/fork-backend.js';
import { jobMark } from '../../src/lrms/fork/job-processes.js';
import type { BatchJobSpec, BatchResult } from '../../src/lrms/backend.js';
import { until } from './backend.case.js';
import { AccountJobs } from './account-jobs.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe(
  'fork backend: private temporary folders and what ps shows',
  { skip: skipUnlessRoot('running jobs as local accounts') },
  () => {
    let root = '';
    let inTmp = '';
    let a: TestAccount;
    let b: TestAccount;
    let jobs: AccountJobs;
    let backend: ForkBackend;
    const hostFile = `/tmp/ceres-host-${process.pid}`;

    before(async () => {
      assertRoot();
      a = createAccount();
      b = createAccount();
      // Not in /tmp: a session there would be hidden under the job's private /tmp.
      root = await mkdtemp('/var/lib/ceres-privtmp-');
      await chmod(root, 0o711);
      inTmp = await mkdtemp(join(tmpdir(), 'ceres-privtmp-'));
      await chmod(inTmp, 0o711);
      jobs = await AccountJobs.create(root, 'privtmp');
      backend = jobs.backend;
      await writeFile(hostFile, 'the host /tmp\n');
    });
    after(async () => {
      await backend?.close();
      removeAccounts();
      await rm(hostFile, { force: true });
      if (root) await rm(root, { recursive: true, force: true });
      if (inTmp) await rm(inTmp, { recursive: true, force: true });
    });

    const spec = (owner: TestAccount, script: string, base = root): Promise<BatchJobSpec> =>
      jobs.spec(owner, script, { base });
    const file = (s: BatchJobSpec, f: string): string => jobs.file(s, f);
    const run = (s: BatchJobSpec): ReturnType<AccountJobs['run']> => jobs.run(s);

    /** Start a job that runs `script`, says `ready` and waits for `stop` in its session; the job's local id. */
    async function startHeld(s: BatchJobSpec): Promise<string> {
      const id = await backend.submit(s);
      await until(`${s.jobId} to be ready`, () => existsSync(join(s.sessionDir, 'ready')));
      return id;
    }
    const held = (script: string): string =>
      `${script}; touch ready; while [ ! -e stop ]; do sleep 0.05; done; echo stopped`;
    async function stop(s: BatchJobSpec, id: string): Promise<BatchResult> {
      await writeFile(join(s.sessionDir, 'stop'), '');
      await until(`the final update of ${s.jobId}`, () => jobs.finals.has(id));
      return jobs.finals.get(id) as BatchResult;
    }

    it("another account's job sees no job id, lrms or session path of a running job (ps, /proc)", async () => {
      const sa = await spec(a, held('sleep 0.01'));
      const ida = await startHeld(sa);
      try {
        const sb = await spec(
          b,
          'ps -eo args; for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ /proc/[0-9]*/mountinfo /proc/[0-9]*/cgroup; do tr "\\0" " " < "$f"; echo; done 2>/dev/null',
        );
        const { r, out } = await run(sb);
        assert.equal(r.exitCode, 0);
        assert.match(out, /sleep|while/, 'the listing shows other processes');
        assert.ok(!out.includes(sa.jobId), 'no job id of the other job');
        assert.ok(!out.includes(sa.sessionDir), 'no session path of the other job');
        assert.ok(!out.includes(sa.lrmsDir), 'no lrms path of the other job');
      } finally {
        await stop(sa, ida);
      }
    });

    it('gives the job its own /tmp, /var/tmp and /dev/shm (TMPDIR=/tmp), unseen by another job of the account, gone after it', async () => {
      const x = `ceres-x-${process.pid}`;
      const s1 = await spec(
        a,
        held(`echo x > /tmp/${x}; echo v > /var/tmp/${x}; echo y > /dev/shm/${x}; echo "TMPDIR=$TMPDIR"`),
      );
      const id1 = await startHeld(s1);
      const scratch = join(root, 'lrms', 'fork', 'scratch', jobMark(s1.lrmsDir));
      let r1: BatchResult;
      try {
        assert.ok(existsSync(join(scratch, 'tmp', x)), 'the file is in the scratch folder');
        assert.ok(existsSync(join(scratch, 'shm', x)), 'the shm file too');
        assert.ok(!existsSync(`/tmp/${x}`), "not in the host's /tmp");
        const s2 = await spec(
          a,
          `ls -A /tmp /var/tmp /dev/shm; cat /tmp/${x} /dev/shm/${x}; test -e ${hostFile} && echo host-visible; stat -c '%U %a' /tmp`,
        );
        const { out, err } = await run(s2);
        assert.match(err, new RegExp(`/tmp/${x}: No such file`));
        assert.match(err, new RegExp(`/dev/shm/${x}: No such file`));
        assert.doesNotMatch(out, /host-visible/, "the host's /tmp is not the job's");
        assert.match(out, new RegExp(`^${a.name} 700$`, 'm'), "the job's /tmp is the account's, 0700");
      } finally {
        r1 = await stop(s1, id1);
      }
      assert.equal(r1.exitCode, 0);
      assert.match(file(s1, 'out'), /^TMPDIR=\/tmp$/m);
      await until('the scratch folder to be removed', () => !existsSync(scratch));
      assert.equal(readFileSync(hostFile, 'utf8'), 'the host /tmp\n', "the service's /tmp is untouched");
      for (const f of ['/tmp', '/var/tmp', '/dev/shm']) assert.ok(!existsSync(join(f, x)), `nothing reached ${f}`);
    });

    it('removes what the job left, links included, without following them', async () => {
      const victim = join(root, 'victim');
      await writeFile(victim, 'keep me\n');
      const s = await spec(
        a,
        `mkdir -p /tmp/d/e && echo z > /tmp/d/e/z && chmod 000 /tmp/d/e && ln -s ${victim} /tmp/link && ln -s ${root} /dev/shm/dir`,
      );
      const { r, err } = await run(s);
      assert.equal(r.exitCode, 0, err);
      await until(
        'the scratch folder to be removed',
        () => !existsSync(join(root, 'lrms', 'fork', 'scratch', jobMark(s.lrmsDir))),
      );
      assert.equal(readFileSync(victim, 'utf8'), 'keep me\n', 'the link target is untouched');
      assert.ok(existsSync(join(root, 'sessions')), 'the linked folder is untouched');
    });

    it('a job whose session lies in /tmp keeps the shared folders (its session stays reachable)', async () => {
      const s = await spec(a, `pwd; test -e ${hostFile} && echo host-visible`, inTmp);
      const { r, out, err } = await run(s);
      assert.equal(r.exitCode, 0, err);
      assert.match(out, /host-visible/);
    });

    it('privateTmp off: jobs share the host folders, as before', async (t) => {
      const shared = await ForkBackend.create({
        workDir: join(root, 'lrms', 'fork-shared'),
        wrapper: 'c',
        privateTmp: 'off',
        pollIntervalMs: 100,
      });
      t.after(() => shared.close());
      assert.equal(shared.scratchRoot, undefined);
      const done = new Map<string, BatchResult>();
      shared.onUpdate((id, u) => {
        if (u.kind === 'final') done.set(id, u.result);
      });
      const s = await spec(a, `test -e ${hostFile} && echo host-visible`);
      const id = await shared.submit(s);
      await until('the final update', () => done.has(id));
      assert.match(file(s, 'out'), /host-visible/);
    });

    it('the probe says no where the kernel refuses a mount namespace (not root)', async () => {
      // A copy the account may run (the backend's own folder is root's alone).
      const copy = join(inTmp, 'wrapper');
      await copyFile(backend.wrapper.path, copy);
      await chmod(copy, 0o755);
      const r = spawnSync(copy, ['--probe-private-tmp'], { encoding: 'utf8', uid: a.uid, gid: a.gid });
      assert.match(r.stdout, /^no the kernel refused a mount namespace/, r.stdout + r.stderr);
      const ok = spawnSync(backend.wrapper.path, ['--probe-private-tmp'], { encoding: 'utf8' });
      assert.equal(ok.stdout, 'ok\n');
    });

    for (const [what, content] of [
      ['a missing file', undefined],
      ['an argument without its NUL', 'a\0b'],
      ['too many arguments', 'x\0'.repeat(16)],
    ] as const) {
      it(`the wrapper refuses its argument file with ${what} and starts nothing`, async () => {
        const s = await spec(a, `touch ${join(root, 'ran-args')}`);
        await mkdir(s.lrmsDir, { recursive: true, mode: 0o700 });
        const path = join(s.lrmsDir, 'args');
        if (content !== undefined) await writeFile(path, content);
        const r = spawnSync(backend.wrapper.path, [], { encoding: 'utf8', env: { CERES_WRAPPER_ARGS: path } });
        assert.match(r.stdout, /^error cannot read the wrapper's arguments/, r.stdout + r.stderr);
        assert.ok(!existsSync(join(root, 'ran-args')), 'nothing ran');
      });
    }
  },
);
