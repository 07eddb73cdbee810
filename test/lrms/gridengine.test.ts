// The Grid Engine backend's own behaviour on a real Grid Engine (one private cell for
// this file, scripts/gridengine-dev.sh): native states with their names, a held job, a
// cancel of a queued job confirmed by qstat, a job in error state (Eqw), a job deleted
// behind the backend's back (lost), a queue that does not exist, the queue figures; and
// the parsers on answers Grid Engine gave. Jobs that must stay queued go to the queue
// `long`, whose two slots are taken by two blocker jobs first.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchJobSpec, BatchResult, BatchUpdate } from '../../src/lrms/backend.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { GridEngineBackend } from '../../src/lrms/gridengine/gridengine-backend.js';
import { geBatchState } from '../../src/lrms/gridengine/ge-state.js';
import { errorReason, parseQacct, parseQstatXml, parseQueueSummary } from '../../src/lrms/gridengine/qstat.js';
import { until } from './backend.case.js';
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

const skip = gridEngineSkip();
describe('gridengine backend specifics on a real Grid Engine', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const blockers: string[] = [];
  // Registered before the cell's own hooks, so it runs before the cell stops.
  after(async () => {
    for (const id of blockers) ge.cmd('qdel', [id]);
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

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-ge-jobs-'));
    b = await GridEngineBackend.create({
      workDir: join(root, 'work'),
      sgeRoot: ge.sgeRoot,
      sgeCell: 'default',
      qmasterPort: ge.qmasterPort,
      execdPort: ge.execdPort,
      pollIntervalMs: 300,
      statusGraceMs: 2000,
      backoffMs: 100,
      commandAttempts: 2,
      infoRefreshMs: 100,
    });
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
    await rm(root, { recursive: true, force: true });
  });

  it('a held job is HELD as hqw, and runs to its end once released', async () => {
    const id = await b.submit(await spec());
    ge.cmd('qhold', [id]);
    await until('HELD/hqw', () => natives(id).includes('HELD/hqw'));
    assert.equal(natives(id)[0], 'QUEUING/qw');
    // Released into a queue with room: qalter moves it to all.q.
    ge.cmd('qalter', ['-q', 'all.q', id]);
    ge.cmd('qrls', [id]);
    const r = await final(id);
    assert.equal(r.exitCode, 0);
    assert.equal(r.failureReason, undefined);
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
    await b.refreshClusterInfo();
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
    await b.cancel(id);
    await final(id);
  });
});
