// A job cannot leave processes behind, not even by killing its own wrapper: daemons in
// their own session, double-forked, under nohup, or (with cgroups) with a cleared
// environment are gone once the job's final update arrives, after a cancel, and after
// release() (clean). Run with cgroups where this machine allows them and without.
import { describe, it, before, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkBackend, type ForkBackendOptions } from '../../src/lrms/fork/fork-backend.js';
import { jobCgroupRoot, jobMark } from '../../src/lrms/fork/job-processes.js';
import type { BatchJobSpec, BatchResult } from '../../src/lrms/backend.js';
import { pidIn, until } from './backend.case.js';
import { processAlive as alive } from '../helpers/service.js';

// Only a cgroup holds a process that clears its environment in a session of its own
// (docs/batch-backends.md); where this machine gives none, the cgroup modes run the
// daemons the process scan can find, and say so.
const probeDir = await mkdtemp(join(tmpdir(), 'ceres-cgprobe-'));
const cgroup = await jobCgroupRoot(probeDir);
if (cgroup.root !== undefined) await rmdir(cgroup.root).catch(() => undefined);
await rm(probeDir, { recursive: true, force: true });

/** Daemons of every kind; each writes its pid to d<N>.pid in the session directory. */
function daemons(cleanEnv: boolean): string {
  const d = (n: number): string => `sh -c 'echo $$ > d${n}.pid; exec sleep 1000'`;
  return [
    `setsid ${d(1)} &`, // own session
    `sh -c '( ${d(2).replaceAll("'", '"').replace('$$', '\\$\\$')} & )' &`, // double fork: orphaned at once
    `nohup ${d(3)} >/dev/null 2>&1 &`,
    ...(cleanEnv ? [`env -i /usr/bin/setsid ${d(4)} &`] : []), // no mark, own session
    `while [ $(ls d*.pid 2>/dev/null | wc -l) -lt ${cleanEnv ? 4 : 3} ]; do sleep 0.02; done`,
  ].join('\n');
}

const MODES: { name: string; opts: Partial<ForkBackendOptions>; cleanEnv: boolean }[] = [
  { name: `cgroup v2 where available (${cgroup.why})`, opts: { cgroups: 'auto' }, cleanEnv: cgroup.root !== undefined },
  { name: 'process scan only (cgroups off)', opts: { cgroups: 'off' }, cleanEnv: false },
  {
    name: 'sh wrapper, cgroup v2 where available',
    opts: { wrapper: 'sh', cgroups: 'auto' },
    cleanEnv: cgroup.root !== undefined,
  },
];

for (const mode of MODES) {
  describe(`processes of a job that kills its own wrapper (${mode.name})`, () => {
    let root = '';
    let n = 0;
    const started: number[] = [];
    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'ceres-procs-'));
    });
    after(async () => {
      for (const p of started) if (alive(p)) process.kill(p, 'SIGKILL');
      await rm(root, { recursive: true, force: true });
    });

    async function backend(
      t: TestContext,
      extra: Partial<ForkBackendOptions> = {},
    ): Promise<{ b: ForkBackend; final: (id: string) => Promise<BatchResult> }> {
      const b = await ForkBackend.create({
        workDir: join(root, 'backend'),
        wrapper: 'c',
        killGraceSeconds: 1,
        pollIntervalMs: 100,
        ...mode.opts,
        ...extra,
      });
      t.after(() => b.close());
      const finals = new Map<string, BatchResult>();
      b.onUpdate((id, u) => {
        if (u.kind === 'final') finals.set(id, u.result);
      });
      return {
        b,
        final: async (id) => {
          await until(`the final update of ${id}`, () => finals.has(id));
          return finals.get(id) as BatchResult;
        },
      };
    }

    async function spec(script: string): Promise<BatchJobSpec> {
      const i = ++n;
      const sessionDir = join(root, `s${i}`);
      await mkdir(sessionDir, { recursive: true });
      return {
        jobId: `procs-${process.pid}-${i}`,
        sessionDir,
        lrmsDir: join(root, `l${i}`),
        executable: '/bin/sh',
        arguments: ['-c', script],
        environment: [],
        runtimeEnvironments: [],
        limits: {},
        slots: 1,
      };
    }

    /** The daemons' pids, once all have started. */
    async function daemonPids(s: BatchJobSpec): Promise<number[]> {
      const files = [1, 2, 3, ...(mode.cleanEnv ? [4] : [])].map((k) => join(s.sessionDir, `d${k}.pid`));
      await until('the daemons to start', () => files.every((f) => pidIn(f) > 0));
      const pids = files.map(pidIn);
      started.push(...pids);
      return pids;
    }

    it('ends: the job starts daemons, kills its wrapper and exits; after its final update none is left', async (t) => {
      const { b, final } = await backend(t);
      t.diagnostic(`cgroup root: ${b.cgroupRoot ?? 'none (not available here)'}`);
      const s = await spec(`${daemons(mode.cleanEnv)}\nkill -9 $PPID\nexit 0`);
      const id = await b.submit(s);
      const pids = await daemonPids(s);
      const r = await final(id);
      assert.match(r.failureReason ?? '', /^job lost: /);
      assert.deepEqual(pids.filter(alive), [], 'no daemon of the job survives its end');
    });

    /** Run `after` (what the job does once its daemons run) in a job, cancel it, check nothing is left; the final result. */
    async function cancelled(
      t: TestContext,
      after: string,
      extra: Partial<ForkBackendOptions> = {},
    ): Promise<BatchResult> {
      const { b, final } = await backend(t, extra);
      const s = await spec(`${daemons(mode.cleanEnv)}\necho $$ > main.pid\n${after}\nwhile :; do sleep 0.05; done`);
      const id = await b.submit(s);
      const pids = await daemonPids(s);
      await until('the main process', () => pidIn(join(s.sessionDir, 'main.pid')) > 0);
      const main = pidIn(join(s.sessionDir, 'main.pid'));
      started.push(main);
      assert.equal(await b.cancel(id), true);
      const r = await final(id);
      assert.deepEqual([main, ...pids].filter(alive), [], 'neither the job nor its daemons survive the cancel');
      return r;
    }

    it('killed: a job that answers the cancel by killing its wrapper leaves nothing running', async (t) => {
      await cancelled(t, "trap 'kill -9 $PPID' TERM");
    });

    it('killed: a job that stopped its wrapper (SIGSTOP) is still cancelled, and nothing of it is left', async (t) => {
      assert.equal((await cancelled(t, 'kill -STOP $PPID', { cancelMarginMs: 300 })).failureReason, 'cancelled');
    });

    it('cleaned: release() kills a process of the job still running after its end', async (t) => {
      const { b, final } = await backend(t);
      const s = await spec('exit 0');
      await final(await b.submit(s));
      // A straggler carrying the job's mark (as if it had escaped everything else).
      const straggler = spawn('sleep', ['1000'], {
        detached: true,
        stdio: 'ignore',
        env: { PATH: process.env.PATH, CERES_JOB_MARK: jobMark(s.lrmsDir) },
      });
      straggler.unref();
      started.push(straggler.pid as number);
      await until('the straggler to run', () => alive(straggler.pid as number));
      await b.release({ jobId: s.jobId, lrmsDir: s.lrmsDir });
      await until('the straggler to be gone', () => !alive(straggler.pid as number), 5000);
    });

    it('a job that ends normally leaves no cgroup behind', async (t) => {
      const { b, final } = await backend(t);
      const s = await spec('sleep 0.1 & exit 0');
      await final(await b.submit(s));
      if (b.cgroupRoot)
        await until(
          'the job cgroup to be removed',
          () => !existsSync(join(b.cgroupRoot as string, `job-${jobMark(s.lrmsDir)}`)),
          5000,
        );
    });
  });
}
