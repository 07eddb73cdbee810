// The Grid Engine backend's own behaviour on a real Grid Engine (one private cell for
// this file, scripts/gridengine-dev.sh): native states with their names, a held job, a
// cancel of a queued job confirmed by qstat, a job in error state (Eqw), a job deleted
// behind the backend's back (lost), a queue that does not exist, the queue figures, a
// qsub whose answer was lost (the process killed right after qsub answered, qsub timing
// out after the qmaster took the job) reconciled without a second job; and the parsers on
// answers Grid Engine gave. Jobs that must stay queued go to the queue
// `long`, whose two slots are taken by two blocker jobs first.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchJobSpec, BatchResult, BatchUpdate } from '../../src/lrms/backend.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { GridEngineBackend, type GridEngineBackendOptions } from '../../src/lrms/gridengine/gridengine-backend.js';
import { geBatchState, geReason } from '../../src/lrms/gridengine/ge-state.js';
import {
  errorReason,
  parseQacct,
  parseQhost,
  parseQstatXml,
  parseQueueSummary,
} from '../../src/lrms/gridengine/qstat.js';
import { until } from './backend.case.js';
import { createAccount, removeAccounts } from '../helpers/local-accounts.js';
import { gridEngineSkip, useGridEngine } from './gridengine-fixture.js';

describe('gridengine parsers', () => {
  it('maps the state letters, the native name wins in this order: d, E, h, suspended, running, waiting', () => {
    const want: [string, string][] = [
      ['qw', 'QUEUING'],
      ['hqw', 'HELD'],
      ['hRwq', 'HELD'],
      ['t', 'RUNNING'],
      ['r', 'RUNNING'],
      ['Rr', 'RUNNING'],
      ['s', 'OTHER'],
      ['S', 'OTHER'],
      ['dr', 'EXITINGLRMS'],
      ['dqw', 'EXITINGLRMS'],
      ['Eqw', 'error'],
    ];
    for (const [native, state] of want) assert.equal(geBatchState(native), state, native);
  });

  it("gives the state letters' reason in the same order; none for a job that runs or waits for the scheduler", () => {
    const want: [string, string | undefined][] = [
      ['qw', undefined],
      ['r', undefined],
      ['Rr', undefined],
      ['t', undefined],
      ['hqw', 'held'],
      ['hRwq', 'held'],
      ['Eqw', 'error state'],
      ['hEqw', 'error state'],
      ['dr', 'deletion asked'],
      ['dEqw', 'deletion asked'],
      ['s', 'suspended'],
      ['S', 'its queue is suspended'],
      ['T', 'suspended by a load threshold of its queue'],
    ];
    for (const [native, reason] of want) assert.equal(geReason(native), reason, native);
  });

  it('counts the execution hosts of qhost, not its global line; none before the header ends', () => {
    const qhost =
      'HOSTNAME                ARCH         NCPU NSOC NCOR NTHR  LOAD  MEMTOT  MEMUSE  SWAPTO  SWAPUS\n' +
      '----------------------------------------------------------------------------------------------\n' +
      'global                  -               -    -    -    -     -       -       -       -       -\n' +
      'localhost               lx-amd64        2    1    2    2  0.50    7.7G    1.2G     0.0     0.0\n' +
      'node2                   lx-amd64        8    1    4    8     -       -       -       -       -\n';
    assert.deepEqual(parseQhost(qhost), ['localhost', 'node2']);
    assert.deepEqual(parseQhost(''), []);
  });

  it('refuses an answer that is not qstat XML (a poll that failed, not "no jobs")', () => {
    assert.throws(() => parseQstatXml('error: commlib error: got select error (Connection refused)'), /job_info/);
    assert.equal(parseQstatXml("<?xml version='1.0'?>\n<job_info>\n<queue_info/>\n<job_info/>\n</job_info>").size, 0);
  });

  it('reads the error reason, a qacct record and the queue summary', () => {
    assert.equal(
      errorReason(
        "job_number: 6\nerror reason    1:          12/01/2026 19:34:44 [0:1]: can't chdir\nscheduling info: x\n",
      ),
      "12/01/2026 19:34:44 [0:1]: can't chdir",
    );
    assert.deepEqual(
      parseQacct('==============\nqname all.q\nfailed       100 : assumedly after job\nexit_status  137\n'),
      {
        failed: 100,
        failedText: 'assumedly after job',
        exitStatus: 137,
      },
    );
    assert.equal(parseQacct('error: job id 5 not found'), undefined);
    const q = parseQueueSummary(
      'CLUSTER QUEUE   CQLOAD   USED    RES  AVAIL  TOTAL aoACDS  cdsuE\n-----\nall.q   0.50  1  0  3  4  0  0\nlong  -NA-  0  0  0  2  0  2\n',
    );
    assert.deepEqual(
      q.map((x) => [x.name, x.used, x.avail, x.total, x.down]),
      [
        ['all.q', 1, 3, 4, 0],
        ['long', 0, 0, 2, 2],
      ],
    );
  });
});

/** A job that waits for the file `go` in its session directory, then appends `once` to runs.txt. */
const WAIT_THEN_ONCE = 'while [ ! -e go ]; do sleep 0.1; done; echo once >> runs.txt';

const skip = gridEngineSkip();
describe('gridengine backend specifics on a real Grid Engine', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const blockers: string[] = [];
  // Registered before the cell's own hooks, so it runs before the cell stops.
  after(async () => {
    for (const id of blockers) ge.cmd('qdel', [id]);
    // A job a failed test left waiting for its go (WAIT_THEN_ONCE) ends too: its shepherd would outlive the cell.
    for (let n = 1; n <= seq; n++) await writeFile(join(root, `session-${n}`, 'go'), '').catch(() => undefined);
    // qdel is asynchronous: wait for the execution daemon to end them (no process outlives the file).
    await until('the blockers to end', () => blockers.every((id) => !inQstat(id)));
  });
  const ge = useGridEngine();
  let root = '';
  let b: GridEngineBackend;
  const updates = new Map<string, BatchUpdate[]>();
  let seq = 0;

  const final = async (id: string): Promise<BatchResult> => {
    await until(`the final update of ${id}`, () => (updates.get(id) ?? []).some((u) => u.kind === 'final'), 60_000);
    const u = (updates.get(id) ?? []).find((x) => x.kind === 'final');
    assert.ok(u && u.kind === 'final');
    return u.result;
  };
  const natives = (id: string): string[] =>
    (updates.get(id) ?? []).flatMap((u) => (u.kind === 'state' ? [`${u.state}/${u.native ?? ''}`] : []));
  const inQstat = (id: string): boolean => parseQstatXml(ge.cmd('qstat', ['-u', '*', '-xml'])).has(id);

  async function spec(patch: Partial<BatchJobSpec> = {}): Promise<BatchJobSpec> {
    const n = ++seq;
    const sessionDir = join(root, `session-${n}`);
    await mkdir(sessionDir, { recursive: true });
    return {
      jobId: `gejob${n}`,
      sessionDir,
      lrmsDir: join(root, `lrms-${n}`),
      executable: '/bin/sh',
      arguments: ['-c', 'echo hello'],
      stdout: 'out.txt',
      environment: [],
      runtimeEnvironments: [],
      limits: {},
      slots: 1,
      // Stays waiting: the queue's slots are taken by the blockers.
      queue: 'long',
      ...patch,
    };
  }

  const options = (): GridEngineBackendOptions => ({
    workDir: join(root, 'work'),
    ...ge.settings(),
    pollIntervalMs: 300,
    statusGraceMs: 2000,
    backoffMs: 100,
    commandAttempts: 2,
    infoRefreshMs: 100,
  });
  /** The Grid Engine jobs of an attempt's Ceres job, by the name's start (the prefix and the job id). */
  const jobsOf = (s: BatchJobSpec): string[] =>
    [
      ...ge
        .cmd('qstat', ['-u', '*', '-xml'])
        .matchAll(/<JB_job_number>(\d+)<\/JB_job_number>\s*<JAT_prio>[^<]*<\/JAT_prio>\s*<JB_name>([^<]*)</g),
    ]
      .filter((m) => (m[2] as string).startsWith(`ceres-${s.jobId}`))
      .map((m) => m[1] as string);
  /**
   * A directory of Grid Engine's commands where qsub is `script` (after the real qsub's
   * answer), the others the real ones.
   */
  async function commandsWithQsub(name: string, script: string): Promise<string> {
    const dir = join(root, name);
    await mkdir(dir);
    for (const tool of ['qstat', 'qdel', 'qacct', 'qhost']) await symlink(`/usr/bin/${tool}`, join(dir, tool));
    await writeFile(join(dir, 'qsub'), `#!/bin/sh\n/usr/bin/qsub "$@" || exit\n${script}\n`);
    await chmod(join(dir, 'qsub'), 0o755);
    return dir;
  }
  /** Submit `s` from a child process whose qsub kills it (SIGKILL) right after Grid Engine answered. */
  async function submitAndCrash(s: BatchJobSpec): Promise<void> {
    const binDir = await commandsWithQsub(`crash-bin-${s.jobId}`, 'kill -9 $PPID');
    const backendUrl = new URL('../../src/lrms/gridengine/gridengine-backend.js', import.meta.url).href;
    const code = `const { GridEngineBackend } = await import(${JSON.stringify(backendUrl)});
      const b = await GridEngineBackend.create(JSON.parse(process.env.CERES_T_OPTIONS));
      await b.submit(JSON.parse(process.env.CERES_T_SPEC));
      console.log('submitted, not killed');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: {
        ...process.env,
        CERES_T_OPTIONS: JSON.stringify({ ...options(), binDir }),
        CERES_T_SPEC: JSON.stringify(s),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, sig) => r(sig)));
    assert.equal(signal, 'SIGKILL', `the submitting process was killed by its qsub: ${out}`);
  }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-ge-jobs-'));
    // Jobs run as a local account in some tests: it must reach the session and lrms directories.
    await chmod(root, 0o755);
    b = await GridEngineBackend.create(options());
    b.onUpdate((id, u) => void updates.set(id, [...(updates.get(id) ?? []), u]));
    for (let i = 0; i < 2; i++)
      blockers.push(
        ge.cmd('qsub', ['-terse', '-b', 'y', '-q', 'long', '-o', '/dev/null', '-j', 'y', '/bin/sleep', '600']).trim(),
      );
    await until('the blockers to run', () => {
      const jobs = parseQstatXml(ge.cmd('qstat', ['-u', '*', '-xml']));
      return blockers.every((id) => jobs.get(id)?.state === 'r');
    });
  });
  after(async () => {
    await b?.close();
    removeAccounts();
    await rm(root, { recursive: true, force: true });
  });

  it('a held job is HELD as hqw, and runs to its end once released', async () => {
    const id = await b.submit(await spec());
    ge.cmd('qhold', [id]);
    await until('HELD/hqw', () => natives(id).includes('HELD/hqw'));
    assert.equal(natives(id)[0], 'QUEUING/qw');
    // The reason comes with the same poll: none while it waits for the scheduler, `held` now.
    const reasons = (updates.get(id) ?? []).flatMap((u) =>
      u.kind === 'state' ? [`${u.native ?? ''}:${u.reason ?? ''}`] : [],
    );
    assert.deepEqual(reasons.slice(0, 2), ['qw:', 'hqw:held']);
    // Released into a queue with room: qalter moves it to all.q.
    ge.cmd('qalter', ['-q', 'all.q', id]);
    ge.cmd('qrls', [id]);
    const r = await final(id);
    assert.equal(r.exitCode, 0);
    assert.equal(r.failureReason, undefined);
    const running = (updates.get(id) ?? []).find((u) => u.kind === 'state' && u.state === 'RUNNING');
    assert.ok(running?.kind === 'state' && running.reason === undefined, 'released and running: no reason');
    assert.ok(
      natives(id).some((n) => n.startsWith('RUNNING/')),
      JSON.stringify(natives(id)),
    );
  });

  it('cancel of a queued job: qdel, confirmed by the job leaving qstat, then one final "cancelled"', async () => {
    const id = await b.submit(await spec());
    await until('QUEUING/qw', () => natives(id).includes('QUEUING/qw') && inQstat(id));
    assert.equal(await b.cancel(id), true);
    const r = await final(id);
    assert.equal(r.failureReason, 'cancelled');
    assert.equal(inQstat(id), false);
    assert.equal((updates.get(id) ?? []).filter((u) => u.kind === 'final').length, 1);
  });

  it('a job Grid Engine cannot start (Eqw) ends with its error reason and is deleted', async () => {
    const s = await spec();
    const id = await b.submit(s);
    ge.cmd('qhold', [id]);
    await until('HELD/hqw', () => natives(id).includes('HELD/hqw'));
    // Its working directory gone: the execution daemon cannot chdir there.
    await rm(s.sessionDir, { recursive: true, force: true });
    ge.cmd('qalter', ['-q', 'all.q', id]);
    ge.cmd('qrls', [id]);
    const r = await final(id);
    assert.match(r.failureReason ?? '', /Grid Engine could not start the job \(Eqw\)/);
    assert.equal(r.exitCode, null);
    const eqw = (updates.get(id) ?? []).find((u) => u.kind === 'state' && u.native === 'Eqw');
    assert.equal(eqw?.kind === 'state' ? eqw.reason : undefined, 'error state');
    assert.equal(inQstat(id), false, 'the job in error is deleted');
  });

  it('a job deleted behind the backend (never started) is lost, with the reason', async () => {
    const id = await b.submit(await spec());
    await until('QUEUING/qw', () => natives(id).includes('QUEUING/qw'));
    ge.cmd('qdel', [id]);
    const r = await final(id);
    assert.match(r.failureReason ?? '', /^job lost: /);
    assert.equal(r.exitCode, null);
  });

  it('a queue that does not exist: submit rejects with the qsub error, nothing is tracked', async () => {
    await assert.rejects(
      b.submit(await spec({ queue: 'nosuchqueue' })),
      (e: unknown) =>
        isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /nosuchqueue|qsub failed/.test(e.message),
    );
  });

  it('cancel of a job it does not know answers false', async () => {
    assert.equal(await b.cancel('999999'), false);
  });

  it('the info document: queues with their slots from qstat -g c, waiting jobs counted', async () => {
    const id = await b.submit(await spec());
    await until('QUEUING/qw', () => natives(id).includes('QUEUING/qw'));
    // The job counts come from the last poll's qstat, which may have begun before the submission.
    const waitingInLong = async (): Promise<boolean> => {
      await b.refreshClusterInfo();
      return (b.clusterInfo()?.queues.find((q) => q.name === 'long')?.waitingJobs ?? 0) >= 1;
    };
    await until('a poll that lists the job, counted as waiting', waitingInLong);
    const info = b.clusterInfo();
    assert.ok(info);
    const long = info.queues.find((q) => q.name === 'long');
    const all = info.queues.find((q) => q.name === 'all.q');
    assert.equal(long?.totalSlots, 2);
    assert.equal(long?.freeSlots, 0);
    assert.equal(long?.runningJobs, 2);
    assert.ok((long?.waitingJobs ?? 0) >= 1);
    assert.equal(all?.totalSlots, 4);
    assert.equal(info.totalSlots, 6);
    assert.equal(info.totalNodes, 1, 'the execution hosts from qhost');
    await b.cancel(id);
    await final(id);
  });
  it('killed between qsub answering and the number recorded: the restarted backend finds the job by its name, no second job', async () => {
    const s = await spec({ queue: 'all.q', arguments: ['-c', WAIT_THEN_ONCE] });
    await submitAndCrash(s);
    const [first, ...more] = jobsOf(s);
    assert.ok(first !== undefined && more.length === 0, `one job in Grid Engine: ${jobsOf(s).join(' ')}`);
    assert.equal(existsSync(join(s.lrmsDir, 'ge-id')), false, 'the crash came before the number was recorded');
    // This file's backend is the restarted service: it submits the same attempt again.
    const again = await b.submit(s);
    assert.equal(again, first);
    assert.deepEqual(jobsOf(s), [first], 'no second Grid Engine job');
    await writeFile(join(s.sessionDir, 'go'), '');
    assert.equal((await final(again)).exitCode, 0);
    assert.equal(readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8'), 'once\n');
    assert.equal(readFileSync(join(s.lrmsDir, 'ge-id'), 'utf8'), `${first}\n`);
  });

  it('killed after qsub answered, the job ran to its end meanwhile: found by the number it wrote, reported once', async () => {
    const s = await spec({ queue: 'all.q', arguments: ['-c', 'echo once >> runs.txt'] });
    await submitAndCrash(s);
    await until(
      'the job to end while no backend watches',
      () => existsSync(join(s.lrmsDir, 'status')) && jobsOf(s).length === 0,
    );
    const id = await b.submit(s);
    const r = await final(id);
    assert.equal(r.exitCode, 0);
    assert.equal(readFileSync(join(s.lrmsDir, 'ge-job'), 'utf8').trim(), id);
    assert.deepEqual(jobsOf(s), [], 'nothing submitted again');
    assert.equal(readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8'), 'once\n');
    assert.equal((updates.get(id) ?? []).filter((u) => u.kind === 'final').length, 1);
  });

  it('a marker left by a crash before qsub reached Grid Engine: the attempt is submitted, once', async () => {
    const s = await spec({ queue: 'all.q', arguments: ['-c', WAIT_THEN_ONCE] });
    await mkdir(s.lrmsDir, { recursive: true });
    await writeFile(join(s.lrmsDir, 'ge-submit'), 'a submission that never got through\n');
    const id = await b.submit(s);
    assert.deepEqual(jobsOf(s), [id], 'one Grid Engine job');
    await writeFile(join(s.sessionDir, 'go'), '');
    assert.equal((await final(id)).exitCode, 0);
    assert.equal(readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8'), 'once\n');
  });

  it('qsub timing out after the qmaster took the job: the retry finds it by its name instead of submitting again', async (t) => {
    // The real qsub answers, then this one hangs past the command timeout.
    const binDir = await commandsWithQsub('slow-bin', 'exec sleep 60');
    const slow = await GridEngineBackend.create({ ...options(), binDir, commandTimeoutMs: 2000, commandAttempts: 3 });
    t.after(() => slow.close());
    const mine = new Map<string, BatchUpdate[]>();
    slow.onUpdate((id, u) => void mine.set(id, [...(mine.get(id) ?? []), u]));
    const s = await spec({ queue: 'all.q', arguments: ['-c', WAIT_THEN_ONCE] });
    const id = await slow.submit(s);
    assert.deepEqual(jobsOf(s), [id], 'one Grid Engine job');
    await writeFile(join(s.sessionDir, 'go'), '');
    await until('the final update', () => (mine.get(id) ?? []).some((u) => u.kind === 'final'));
    assert.equal(readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8'), 'once\n');
  });
  it("a job runs as the spec's local account: Grid Engine's owner, its files and the wrapper's the account's", async () => {
    const acct = createAccount();
    const s = await spec({ queue: 'all.q', arguments: ['-c', 'id -un; touch made.txt'], localAccount: acct.name });
    await chown(s.sessionDir, acct.uid, acct.gid);
    const id = await b.submit(s);
    assert.match(ge.cmd('qstat', ['-j', id]), new RegExp(`^owner:\\s+${acct.name}$`, 'm'), 'qsub ran as the account');
    const r = await final(id);
    assert.equal(r.exitCode, 0, r.failureReason);
    assert.equal(readFileSync(join(s.sessionDir, 'out.txt'), 'utf8'), `${acct.name}\n`);
    for (const f of [
      join(s.sessionDir, 'made.txt'),
      join(s.sessionDir, 'out.txt'),
      s.lrmsDir,
      join(s.lrmsDir, 'status'),
    ])
      assert.equal((await stat(f)).uid, acct.uid, `${f} is the account's`);
    // The service read the account's status file through the job-file rules: the figures are the job's word.
    assert.ok(r.jobReported !== undefined && r.jobReported.length > 0);
  });

  it('a job for an account that does not exist, or for root, is refused before qsub: nothing reaches Grid Engine', async () => {
    const unknown = await spec({ queue: 'all.q', localAccount: 'no-such-account-ge' });
    await assert.rejects(b.submit(unknown), (e: unknown) => isCeError(e) && e.code === 'CE_ERR_ACCOUNT_UNKNOWN');
    const asRoot = await spec({ queue: 'all.q', localAccount: 'root' });
    await assert.rejects(
      b.submit(asRoot),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_ACCOUNT_REFUSED' && /root/.test(e.message),
    );
    assert.deepEqual([...jobsOf(unknown), ...jobsOf(asRoot)], []);
    assert.equal(existsSync(join(asRoot.lrmsDir, 'ge-submit')), false, 'no submission was begun');
  });

  it("an account that cannot write the session directory: the job fails with the wrapper's reason, not lost in silence", async () => {
    const acct = createAccount();
    // The session directory stays root's (0755): the account cannot create its output there.
    const s = await spec({ queue: 'all.q', arguments: ['-c', 'echo hi'], localAccount: acct.name });
    const id = await b.submit(s);
    const r = await final(id);
    assert.notEqual(r.exitCode, 0);
    assert.ok(r.failureReason !== undefined && r.failureReason !== '', JSON.stringify(r));
    assert.equal(existsSync(join(s.sessionDir, 'out.txt')), false);
  });
});
