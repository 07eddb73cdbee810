// What is specific to the Slurm backend, on a real Slurm (started once for this file):
// partitions and their limits, batch sub-states (held, queued), scancel of a queued job,
// jobs Slurm lost, a lost sbatch answer reconciled without a second submission, jobs run
// as a local account, slurmctld killed or frozen while jobs run and while submitting,
// and 200 jobs submitted at once.
import { describe, it, before, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SlurmBackend, type SlurmBackendOptions } from '../../src/lrms/slurm/slurm-backend.js';
import { attemptTag, jobName } from '../../src/lrms/slurm/sbatch-options.js';
import type { BatchJobSpec, BatchResult, BatchUpdate } from '../../src/lrms/backend.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';
import { until } from './backend.case.js';

const skip = slurmSkip();

describe('slurm backend specifics on a real Slurm', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let root = '';
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-slurm-t-'));
    // Jobs run as `nobody` in one test: it must reach the session and lrms directories.
    await chmod(root, 0o755);
  });
  after(() => rm(root, { recursive: true, force: true }));

  interface Handle {
    b: SlurmBackend;
    updates: Map<string, BatchUpdate[]>;
    final: (id: string, timeoutMs?: number) => Promise<BatchResult>;
    finals: (id: string) => number;
  }

  async function backend(t: TestContext, extra: Partial<SlurmBackendOptions> = {}): Promise<Handle> {
    const b = await SlurmBackend.create({
      workDir: join(root, 'backend'),
      slurmConf: slurm.conf,
      pollIntervalMs: 300,
      killGraceSeconds: 2,
      sampleIntervalMs: 100,
      statusGraceMs: 2000,
      backoffMs: 200,
      ...extra,
    });
    t.after(() => b.close());
    const updates = new Map<string, BatchUpdate[]>();
    b.onUpdate((id, u) => void updates.set(id, [...(updates.get(id) ?? []), u]));
    const finals = (id: string): number => (updates.get(id) ?? []).filter((u) => u.kind === 'final').length;
    const final = async (id: string, timeoutMs = 60_000): Promise<BatchResult> => {
      try {
        await until(`the final update of ${id}`, () => finals(id) > 0, timeoutMs);
      } catch (e) {
        // Say what Slurm and the backend saw, so that a failure far away (CI) can be understood.
        throw new Error(
          `${(e as Error).message}\n${slurmView(id)}\nupdates: ${JSON.stringify(updates.get(id) ?? [])}`,
          {
            cause: e,
          },
        );
      }
      const u = (updates.get(id) ?? []).find((x) => x.kind === 'final');
      assert.ok(u && u.kind === 'final');
      return u.result;
    };
    return { b, updates, final, finals };
  }

  /** Slurm's own view of a job and of the node, for a failure message. */
  function slurmView(id: string): string {
    const ask = (tool: string, args: string[]): string => {
      try {
        return slurm.cmd(tool, args).trim();
      } catch (e) {
        return `${tool} failed: ${(e as Error).message}`;
      }
    };
    return [
      `sinfo: ${ask('sinfo', ['-h', '-o', '%P %T %E'])}`,
      `squeue (first 20): ${ask('squeue', ['-h', '-o', '%i %j %T %r']).split('\n').slice(0, 20).join(' | ')}`,
      `scontrol show job ${id}: ${ask('scontrol', ['-o', 'show', 'job', id])}`,
    ].join('\n');
  }

  async function spec(patch: Partial<BatchJobSpec> = {}): Promise<BatchJobSpec> {
    const i = ++n;
    const sessionDir = join(root, `s${i}`);
    await mkdir(sessionDir, { recursive: true });
    return {
      jobId: `slurm-t${i}-${process.pid}`,
      sessionDir,
      lrmsDir: join(root, `l${i}`),
      executable: '/bin/sh',
      arguments: ['-c', 'echo hello'],
      stdout: 'out.txt',
      stderr: 'err.txt',
      environment: [],
      runtimeEnvironments: [],
      limits: {},
      slots: 1,
      ...patch,
    };
  }

  const field = (id: string, key: string): string => {
    const m = new RegExp(`(?:^|\\s)${key}=(\\S*)`).exec(slurm.cmd('scontrol', ['show', 'job', '-o', id]));
    return m?.[1] ?? '';
  };
  const jobsNamed = (name: string): string[] =>
    slurm
      .cmd('squeue', ['-h', '-a', '-t', 'all', `--name=${name}`, '-o', '%i'])
      .split('\n')
      .filter((l) => l.trim() !== '');

  it('the queue is the partition; the time limit and memory reach Slurm', async (t) => {
    const h = await backend(t);
    const s = await spec({ queue: 'long', limits: { wallTimeSeconds: 600, memoryBytes: 300 * 1024 * 1024 }, slots: 2 });
    const id = await h.b.submit(s);
    assert.equal(field(id, 'Partition'), 'long');
    assert.equal(field(id, 'TimeLimit'), '00:12:00'); // 600 s + 2 s grace + 60 s margin, in whole minutes
    assert.equal(field(id, 'NumTasks'), '2');
    assert.equal(field(id, 'MinMemoryCPU'), '150M', '300 MiB over 2 slots');
    assert.equal(field(id, 'JobName'), `ceres-${s.jobId}`);
    assert.equal(field(id, 'Comment'), attemptTag(s));
    assert.equal((await h.final(id)).exitCode, 0);
    const d = await spec();
    const id2 = await h.b.submit(d);
    assert.equal(field(id2, 'Partition'), 'debug', 'no queue: the default partition');
    await h.final(id2);
  });

  it('slots per node and exclusive hosts reach Slurm; slots per node that do not divide the slots are refused', async (t) => {
    const h = await backend(t);
    const id = await h.b.submit(await spec({ slots: 2, slotsPerNode: 2, exclusive: true }));
    assert.match(field(id, 'NumNodes'), /^1(-1)?$/);
    assert.match(slurm.cmd('scontrol', ['show', 'job', '-o', id]), /NtasksPerN:B:S:C=2:/);
    assert.equal(field(id, 'OverSubscribe'), 'NO');
    assert.equal((await h.final(id)).exitCode, 0);
    await assert.rejects(
      h.b.submit(await spec({ slots: 3, slotsPerNode: 2 })),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_BAD_SPEC',
    );
  });

  it("a partition that does not exist, or a time limit over the partition's, is refused at submit with Slurm's reason", async (t) => {
    const h = await backend(t);
    await assert.rejects(
      h.b.submit(await spec({ queue: 'nope' })),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /Invalid partition/.test(e.message),
    );
    await assert.rejects(
      h.b.submit(await spec({ queue: 'debug', limits: { wallTimeSeconds: 2 * 3600 } })),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /time limit/i.test(e.message),
    );
  });

  it('states come from Slurm: a held job is HELD, released it runs and ends', async (t) => {
    const h = await backend(t, { extraSbatchArgs: ['--hold'] });
    const s = await spec({ arguments: ['-c', 'sleep 1; exit 7'] });
    const id = await h.b.submit(s);
    const states = (): string[] =>
      (h.updates.get(id) ?? []).flatMap((u) => (u.kind === 'state' ? [`${u.state}/${u.native ?? ''}`] : []));
    await until('the HELD state', () => states().includes('HELD/PENDING'));
    slurm.cmd('scontrol', ['release', id]);
    const r = await h.final(id);
    assert.equal(r.exitCode, 7);
    assert.equal(r.failureReason, undefined);
    assert.ok(states().includes('RUNNING/RUNNING'), states().join(' '));
    assert.equal(h.finals(id), 1);
  });

  it("a job pending for Resources carries Slurm's reason from the poll; running, it carries none", async (t) => {
    const h = await backend(t);
    // The node's every CPU taken by one job: the next one waits for Resources.
    const cpus = Number(/CPUTot=(\d+)/.exec(slurm.cmd('scontrol', ['show', 'node', '-o']))?.[1] ?? '8');
    const big = await h.b.submit(await spec({ slots: cpus, arguments: ['-c', 'sleep 60'] }));
    await until('the big job running', () => field(big, 'JobState') === 'RUNNING');
    const small = await h.b.submit(await spec({ arguments: ['-c', 'echo small'] }));
    const reasons = (): string[] =>
      (h.updates.get(small) ?? []).flatMap((u) => (u.kind === 'state' ? [`${u.state}/${u.reason ?? ''}`] : []));
    await until('the reason Resources', () => reasons().includes('QUEUING/Resources'), 60_000);
    await h.b.cancel(big);
    await h.final(small);
    assert.deepEqual(
      reasons().filter((r) => r.startsWith('RUNNING/') && r !== 'RUNNING/'),
      [],
      'a running job has no pending reason',
    );
  });

  it('scancel of a queued job: cancelled, confirmed by Slurm, the job never ran', async (t) => {
    const h = await backend(t, { extraSbatchArgs: ['--hold'] });
    const s = await spec({ arguments: ['-c', 'echo ran > ran.txt'] });
    const id = await h.b.submit(s);
    assert.equal(await h.b.cancel(id), true);
    const r = await h.final(id);
    assert.equal(r.failureReason, 'cancelled');
    assert.equal(field(id, 'JobState'), 'CANCELLED');
    assert.equal(existsSync(join(s.sessionDir, 'ran.txt')), false);
    assert.match(readFileSync(join(s.lrmsDir, 'diag'), 'utf8'), /^LRMSMessage=cancelled$/m);
  });

  it('a recovered job Slurm does not know and that left no status is lost, not hanging', async (t) => {
    const h = await backend(t);
    const s = await spec();
    await mkdir(s.lrmsDir, { recursive: true });
    await h.b.recover([{ jobId: s.jobId, localId: '99999', sessionDir: s.sessionDir, lrmsDir: s.lrmsDir }]);
    const r = await h.final('99999');
    assert.match(r.failureReason ?? '', /^job lost: Slurm no longer knows job 99999/);
    assert.equal(r.exitCode, null);
  });

  it('a job whose wrapper could not run (lrms directory unusable) ends FAILED with a reason', async (t) => {
    const h = await backend(t);
    const s = await spec();
    const id = await h.b.submit(s);
    // Claimed by "another" wrapper before the job starts: this job's wrapper refuses to run it.
    await writeFile(join(s.lrmsDir, 'pid'), '1 0\n');
    const r = await h.final(id);
    assert.match(r.failureReason ?? '', /^job lost: /);
    assert.equal(existsSync(join(s.sessionDir, 'out.txt')), false);
  });

  it('a lost sbatch answer is reconciled: the job submitted before is found by name and attempt, not submitted again', async (t) => {
    const h = await backend(t);
    const s = await spec({ arguments: ['-c', 'while [ ! -e go ]; do sleep 0.1; done; echo once >> runs.txt'] });
    // What a crash right after sbatch leaves: the marker, the job in Slurm, no recorded id.
    const first = await h.b.submit(s);
    await rm(join(s.lrmsDir, 'slurm-id'));
    await rm(join(s.lrmsDir, 'slurm-job'), { force: true });
    await h.b.close();
    const h2 = await backend(t);
    const again = await h2.b.submit(s);
    assert.equal(again, first);
    assert.deepEqual(jobsNamed(jobName({ jobNamePrefix: 'ceres-' }, s.jobId)), [first]);
    await writeFile(join(s.sessionDir, 'go'), '');
    assert.equal((await h2.final(first)).exitCode, 0);
    assert.equal(readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8'), 'once\n');
  });

  it("a lost sbatch answer never adopts another account's job of the same name and attempt tag", async (t) => {
    const h = await backend(t);
    const s = await spec({ arguments: ['-c', 'echo mine > out.txt'] });
    // What a crash right after sbatch leaves, where the sbatch had not yet reached Slurm: the
    // marker only. Another local account (it can read every job's name in squeue, and the tag
    // is a hash of a predictable path) planted a held job with that name and comment.
    await mkdir(s.lrmsDir, { recursive: true });
    await writeFile(join(s.lrmsDir, 'slurm-submit'), '');
    const name = jobName({ jobNamePrefix: 'ceres-' }, s.jobId);
    const planted = slurm
      .cmd('runuser', [
        ...['-u', 'nobody', '--', 'sbatch', '--parsable', '--hold', `--job-name=${name}`],
        ...[`--comment=${attemptTag(s)}`, '--chdir=/tmp', '--output=/dev/null', '--wrap=true'],
      ])
      .trim()
      .split(';')[0] as string;
    t.after(() => slurm.cmd('scancel', [planted]));
    const id = await h.b.submit(s);
    assert.notEqual(id, planted, "the other account's job was adopted (Ceres would follow and cancel it)");
    assert.equal((await h.final(id)).exitCode, 0);
    assert.equal(readFileSync(join(s.sessionDir, 'out.txt'), 'utf8'), 'mine\n');
  });

  it("jobs run as the spec's local account (runuser), and Slurm accounts them to it", async (t) => {
    const h = await backend(t);
    const s = await spec({ arguments: ['-c', 'id -un'], localAccount: 'nobody' });
    await chmod(s.sessionDir, 0o777);
    const id = await h.b.submit(s);
    assert.equal(field(id, 'UserId'), `nobody(${readFileSync('/etc/passwd', 'utf8').match(/^nobody:x:(\d+):/m)?.[1]})`);
    const r = await h.final(id);
    assert.equal(r.exitCode, 0, r.failureReason);
    assert.equal(readFileSync(join(s.sessionDir, 'out.txt'), 'utf8'), 'nobody\n');
    await assert.rejects(
      h.b.submit(await spec({ localAccount: 'no-such-account-x' })),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_ACCOUNT_UNKNOWN',
    );
    // Never handed to Slurm as root (before, `runuser -u root sbatch` ran it as root).
    await assert.rejects(
      h.b.submit(await spec({ localAccount: 'root' })),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_ACCOUNT_REFUSED' && /jobs never run as root/.test(e.message),
    );
  });

  it("a wrapper that cannot write its status file: the reason names the file and why, not 'job lost'", async (t) => {
    const h = await backend(t);
    // Two jobs as `nobody`, each waiting for its go; while they run, their lrms folders are
    // taken from the account (what a restore without owners did).
    const specs = await Promise.all(
      [0, 1].map(() =>
        spec({ arguments: ['-c', 'while [ ! -e go ]; do sleep 0.1; done; echo ran'], localAccount: 'nobody' }),
      ),
    );
    const ids: string[] = [];
    for (const s of specs) {
      await chmod(s.sessionDir, 0o777);
      ids.push(await h.b.submit(s));
    }
    for (const s of specs) await until('the wrapper to claim its folder', () => existsSync(join(s.lrmsDir, 'pid')));
    for (const s of specs) {
      await chown(s.lrmsDir, 0, 0);
      await chmod(s.lrmsDir, 0o700);
    }
    // The second one's slurm.out out of reach too (a restored folder is a new one): the
    // backend tells the cause from the wrapper's exit code and the folder's owner.
    await rm(join((specs[1] as BatchJobSpec).lrmsDir, 'slurm.out'));
    for (const s of specs) await writeFile(join(s.sessionDir, 'go'), '');
    const [said, told] = [await h.final(ids[0] as string), await h.final(ids[1] as string)];
    const dir0 = (specs[0] as BatchJobSpec).lrmsDir;
    const dir1 = (specs[1] as BatchJobSpec).lrmsDir;
    assert.equal(
      said.failureReason,
      `the job's end was not recorded: the job wrapper cannot write the diag file ${dir0}/diag: Permission denied; cannot write the status file ${dir0}/status: Permission denied`,
    );
    assert.equal(
      told.failureReason,
      `the job's end was not recorded: the job wrapper could not write its status file ${dir1}/status (exit 3): the job's account must reach and write ${dir1} when the job ends (now: uid 0, mode 0700)`,
    );
    for (const r of [said, told]) assert.equal(r.exitCode, null);
  });

  it('slurmctld killed while jobs run and while one is submitted: nothing lost, nothing submitted twice', async (t) => {
    const h = await backend(t, { commandTimeoutMs: 3000, commandAttempts: 30, backoffMs: 200 });
    const specs = await Promise.all(
      [1, 2, 3].map(() => spec({ arguments: ['-c', 'while [ ! -e go ]; do sleep 0.1; done; echo done'] })),
    );
    const ids = await Promise.all(specs.map((s) => h.b.submit(s)));
    await until('the jobs to run', () => specs.every((s) => existsSync(join(s.lrmsDir, 'pid'))));
    // A controller killed before it saved its state forgets the newest jobs and gives their
    // ids again (a site keeps StateSaveLocation on disk that survives crashes): wait for the save.
    // It must be a save made after the jobs started: one made while they were still pending
    // makes the restarted controller start them a second time, slurmd refuses the launch as a
    // "Duplicate jobid" and Slurm drains the node, so that no later job runs (seen once in
    // three runs before this waited). A held marker job submitted now is in the first save
    // made after the jobs started.
    const marker = `ceres-save-marker-${process.pid}`;
    slurm.cmd('sbatch', ['--hold', '-J', marker, '-o', '/dev/null', '--wrap', 'true']);
    await until('slurmctld to save the jobs as started', () => {
      const saved = readFileSync(join(slurm.dir, 'state', 'job_state')).toString('latin1');
      return saved.includes(marker) && specs.every((s) => saved.includes(`ceres-${s.jobId}`));
    });
    slurm.ctld('kill');
    const late = await spec({ arguments: ['-c', 'echo late'] });
    const lateId = h.b.submit(late);
    await new Promise((r) => setTimeout(r, 1500)); // sbatch fails and is retried meanwhile
    for (const s of specs) await writeFile(join(s.sessionDir, 'go'), '');
    // Jobs end while the controller is down: their status files tell.
    await Promise.all(ids.map((id) => h.final(id)));
    slurm.ctld('start');
    const lid = await lateId;
    const r = await h.final(lid);
    assert.equal(r.exitCode, 0);
    assert.equal(readFileSync(join(late.sessionDir, 'out.txt'), 'utf8'), 'late\n');
    for (const [i, id] of ids.entries()) {
      assert.equal(h.finals(id), 1);
      assert.equal((await h.final(id)).exitCode, 0, JSON.stringify(await h.final(id)));
      assert.equal(readFileSync(join((specs[i] as BatchJobSpec).sessionDir, 'out.txt'), 'utf8'), 'done\n');
    }
    assert.equal(jobsNamed(`ceres-${late.jobId}`).length, 1, 'one Slurm job for the late submission');
    // The restarted controller started no job twice (that drains the node for the tests after).
    assert.doesNotMatch(slurm.cmd('sinfo', ['-h', '-o', '%T %E']), /drain|Duplicate/i);
  });

  it('slurmctld frozen during sbatch: the hanging call times out, the retry finds the job that got through', async (t) => {
    const h = await backend(t, { commandTimeoutMs: 1000, commandAttempts: 30, backoffMs: 200 });
    const s = await spec({ arguments: ['-c', 'echo once >> runs.txt'] });
    slurm.ctld('freeze');
    let thawed = false;
    try {
      const p = h.b.submit(s);
      await new Promise((r) => setTimeout(r, 2500));
      slurm.ctld('thaw');
      thawed = true;
      const id = await p;
      const r = await h.final(id);
      assert.equal(r.exitCode, 0);
      await new Promise((r2) => setTimeout(r2, 1000));
      assert.equal(readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8'), 'once\n');
      const named = jobsNamed(`ceres-${s.jobId}`);
      // A frozen controller may still have accepted the first sbatch: then a second one ran nothing.
      assert.ok(named.includes(id), named.join(','));
    } finally {
      if (!thawed) slurm.ctld('thaw');
    }
  });

  it('slurmctld down for good: submit gives up after its attempts with the reason', async (t) => {
    const h = await backend(t, { commandTimeoutMs: 2000, commandAttempts: 3, backoffMs: 100 });
    slurm.ctld('kill');
    try {
      const t0 = Date.now();
      await assert.rejects(
        h.b.submit(await spec()),
        (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /after 3 attempts/.test(e.message),
      );
      assert.ok(Date.now() - t0 < 30_000);
    } finally {
      slurm.ctld('start');
    }
  });

  // Many more than the commands allowed at once and the node's CPUs: the submissions
  // queue for their turn, and Slurm runs the jobs eight at a time.
  const MANY = 200;
  it(`${MANY} jobs submitted at once all end correctly, each reported once`, { timeout: 300_000 }, async (t) => {
    const h = await backend(t, { pollIntervalMs: 1000 });
    const specs = await Promise.all(
      Array.from({ length: MANY }, (_, i) => spec({ executable: '/bin/echo', arguments: [`job ${i}`] })),
    );
    const ids = await Promise.all(specs.map((s) => h.b.submit(s)));
    assert.equal(new Set(ids).size, MANY);
    const results = await Promise.all(ids.map((id) => h.final(id, 240_000)));
    results.forEach((r, i) => {
      assert.equal(r.exitCode, 0, r.failureReason);
      assert.equal(readFileSync(join((specs[i] as BatchJobSpec).sessionDir, 'out.txt'), 'utf8'), `job ${i}\n`);
      assert.equal(h.finals(ids[i] as string), 1);
    });
  });
});
