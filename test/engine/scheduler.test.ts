// The scheduler on its own: a real store (SQLite) and control directory, a batch backend
// and a staging port driven by the test, so each rule is seen directly: a lost
// compare-and-set is decided again from the fresh record, slots are released to the
// waiting jobs, a cancel the batch system never confirms ends after the timeout, and a
// session lifetime that ends wipes the job, then purges its record.
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import type { JobChanges, JobRecord } from '../../src/store/job-record.js';
import { ControlDir } from '../../src/store/control-dir.js';
import { Scheduler, type SchedulerOptions } from '../../src/engine/scheduler/scheduler.js';
import type { SessionsPort, StageInOptions, StageOutcome, StagingPort } from '../../src/engine/scheduler/ports.js';
import type { StageOutMode } from '../../src/engine/state-machine.js';
import type { BatchBackend, BatchJobSpec, BatchUpdate, BatchUpdateListener } from '../../src/lrms/backend.js';
import { parseXrsl } from '../../src/jobdesc/xrsl/parse-xrsl.js';
import { until } from '../helpers/poll.js';
import { newJobRow } from '../helpers/new-job.js';

class FakeBackend implements BatchBackend {
  readonly name = 'fake';
  runsOnSubmit = false;
  #listener: BatchUpdateListener | undefined;
  readonly submits: BatchJobSpec[] = [];
  readonly cancels: string[] = [];
  /** What cancel() answers: true = the job is still running (the final update comes later). */
  stillRunningOnCancel = true;
  onUpdate(l: BatchUpdateListener): void {
    this.#listener = l;
  }
  submit(spec: BatchJobSpec): Promise<string> {
    this.submits.push(spec);
    return Promise.resolve(`L-${spec.jobId}`);
  }
  /** Jobs taken back by recover(), which takes `recoverMs` (as reading each job's files does). */
  readonly recovered = new Set<string>();
  recoverMs = 0;
  /** Answer cancel() as a real backend does: a job it does not hold is "not running". */
  cancelOnlyHeld = false;
  /** Cancels that came while the job was not held (before its recovery). */
  readonly cancelsUnheld: string[] = [];
  async recover(refs: readonly { localId: string }[]): Promise<void> {
    if (this.recoverMs > 0) await new Promise((r) => setTimeout(r, this.recoverMs));
    for (const ref of refs) this.recovered.add(ref.localId);
  }
  cancel(localId: string): Promise<boolean> {
    this.cancels.push(localId);
    const held = this.recovered.has(localId) || this.submits.some((s) => `L-${s.jobId}` === localId);
    if (!held) this.cancelsUnheld.push(localId);
    return Promise.resolve(this.cancelOnlyHeld && !held ? false : this.stillRunningOnCancel);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  async emit(localId: string, u: BatchUpdate): Promise<void> {
    await this.#listener?.(localId, u);
  }
}

/** Stage-in and stage-out that finish when the test says so (or at once when not gated). */
class FakeStaging implements StagingPort {
  gateIn = false;
  /** Say that jobs without input files have nothing to stage in (as the real port does). */
  skipEmptyStageIn = false;
  readonly ins: string[] = [];
  readonly outs: { id: string; mode: StageOutMode }[] = [];
  readonly #pending = new Map<string, (r: StageOutcome) => void>();
  /**
   * Jobs whose client uploads are still missing: a look (`lookOnce`) says so and when to
   * look again (ms from now); an aborted look reports as an aborted wait.
   */
  readonly missingUploads = new Map<string, number>();
  /** Looks at uploads: job id, aborted, `preparingSince` passed. */
  readonly looks: { id: string; aborted: boolean; since: number | undefined }[] = [];
  /** Runs during a look (before it answers). */
  duringLook: ((id: string) => void) | undefined;
  /**
   * Session checks held until `checkSessions()` (as slow first uses of session directories):
   * the real port reports each check done (`sessionChecked`) before anything else.
   */
  holdSessionChecks = false;
  readonly #heldChecks: (() => void)[] = [];
  get heldSessionChecks(): number {
    return this.#heldChecks.length;
  }
  checkSessions(): void {
    for (const f of this.#heldChecks.splice(0)) f();
  }
  /** Looks at missing uploads held (as slow disks) until `endLooks()`; the most held at once. */
  holdLooks = false;
  maxLooksHeld = 0;
  readonly #heldLooks: (() => void)[] = [];
  get heldLooks(): number {
    return this.#heldLooks.length;
  }
  endLooks(): void {
    for (const f of this.#heldLooks.splice(0)) f();
  }
  stageIn(job: JobRecord, signal: AbortSignal, o?: StageInOptions): Promise<StageOutcome> {
    this.ins.push(job.id);
    if (o?.sessionChecked !== undefined) {
      if (this.holdSessionChecks) this.#heldChecks.push(o.sessionChecked);
      else o.sessionChecked();
    }
    const again = this.missingUploads.get(job.id);
    if (again !== undefined && o?.lookOnce === true) {
      this.looks.push({ id: job.id, aborted: signal.aborted, since: o.preparingSince });
      this.duringLook?.(job.id);
      if (signal.aborted) return Promise.resolve({ ok: false, reason: 'Data staging cancelled', aborted: true });
      const answer: StageOutcome = { ok: false, waiting: true, checkAt: Date.now() + again };
      if (!this.holdLooks) return Promise.resolve(answer);
      this.maxLooksHeld = Math.max(this.maxLooksHeld, this.#heldLooks.length + 1);
      return new Promise((resolve) => this.#heldLooks.push(() => resolve(answer)));
    }
    if (!this.gateIn) return Promise.resolve({ ok: true });
    return new Promise((resolve) => {
      this.#pending.set(job.id, resolve);
      signal.addEventListener('abort', () => resolve({ ok: false, reason: 'aborted', aborted: true }), { once: true });
    });
  }
  nothingToStageIn(job: JobRecord): boolean {
    return this.skipEmptyStageIn && job.description.inputFiles.length === 0;
  }
  /** Say that stage-outs have nothing to do (as the real port does for a session never made). */
  skipStageOut = false;
  nothingToStageOut(): boolean {
    return this.skipStageOut;
  }
  /** Stage-outs wait for finishOut() (or their abort). */
  gateOut = false;
  outsRunning = 0;
  maxOutsRunning = 0;
  readonly abortedOuts: string[] = [];
  readonly #pendingOut = new Map<string, () => void>();
  stageOut(job: JobRecord, mode: StageOutMode, signal: AbortSignal): Promise<StageOutcome> {
    this.outs.push({ id: job.id, mode });
    if (signal.aborted) this.abortedOuts.push(job.id);
    if (!this.gateOut || signal.aborted) return Promise.resolve({ ok: true });
    this.maxOutsRunning = Math.max(this.maxOutsRunning, ++this.outsRunning);
    return new Promise((resolve) => {
      const done = (r: StageOutcome): void => {
        if (!this.#pendingOut.delete(job.id)) return;
        this.outsRunning--;
        resolve(r);
      };
      this.#pendingOut.set(job.id, () => done({ ok: true }));
      signal.addEventListener('abort', () => done({ ok: false, reason: 'Data staging cancelled', aborted: true }), {
        once: true,
      });
    });
  }
  /** Ends every stage-out running now. */
  finishOuts(): number {
    const all = [...this.#pendingOut.values()];
    for (const f of all) f();
    return all.length;
  }
  finishIn(id: string): void {
    const r = this.#pending.get(id);
    assert.ok(r, `no stage-in of ${id} waiting`);
    this.#pending.delete(id);
    r({ ok: true });
  }
}

class FakeSessions implements SessionsPort {
  readonly removed: string[] = [];
  /** When set, a removal waits for it (a slow disk, a busy event loop). */
  removeGate: Promise<void> | undefined;
  constructor(private readonly root: string) {}
  pathOf(id: string): string {
    return join(this.root, id);
  }
  check(): Promise<void> {
    return Promise.resolve();
  }
  withRoot<T>(id: string, _identity: string | null, fn: (dir: string) => Promise<T>): Promise<T> {
    return fn(this.pathOf(id));
  }
  async remove(id: string): Promise<{ found: string; leftovers: readonly string[]; keptForeign: boolean }> {
    this.removed.push(id);
    await this.removeGate;
    return { found: 'dir', leftovers: [], keptForeign: false };
  }
}

/** The real store, with a hook that runs just before an update of the engine (to race it). */
class RacedStore extends JobStore {
  beforeUpdate: ((expected: Pick<JobRecord, 'id' | 'version'>, changes: JobChanges) => void) | undefined;
  updates = 0;
  override update(
    expected: Pick<JobRecord, 'id' | 'version'>,
    changes: JobChanges,
    now?: number,
  ): JobRecord | undefined {
    const hook = this.beforeUpdate;
    if (hook) {
      this.beforeUpdate = undefined;
      hook(expected, changes);
      this.beforeUpdate = hook;
    }
    this.updates++;
    return super.update(expected, changes, now);
  }
}

interface Rig {
  readonly dir: string;
  readonly db: Db;
  readonly store: RacedStore;
  readonly backend: FakeBackend;
  readonly staging: FakeStaging;
  readonly sessions: FakeSessions;
  readonly scheduler: Scheduler;
  readonly warnings: string[];
  /** Jobs that reached a final state (told by the scheduler's onTransition): waited on instead of reading each record. */
  readonly ended: Set<string>;
  clock: number;
  submit(id: string, xrsl?: string, owner?: string): void;
  job(id: string): JobRecord | undefined;
  /** A REST-side change (a flag set by a request), as the job actions make it. */
  flag(id: string, changes: JobChanges): void;
}

const rigs: { dir: string; scheduler: Scheduler; db: Db }[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.scheduler.stop();
    r.db.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function rig(
  options: Omit<Partial<SchedulerOptions>, 'limits'> & {
    limits?: Partial<SchedulerOptions['limits']>;
    /** Runs on the rig before the scheduler starts (jobs stored while the service was down). */
    beforeStart?: (r: Rig) => void;
  } = {},
): Promise<Rig> {
  const { beforeStart, ...o } = options;
  const dir = mkdtempSync(join(tmpdir(), 'ceres-scheduler-'));
  const db = openDatabase(join(dir, 'db'));
  const store = new RacedStore(db);
  const backend = new FakeBackend();
  const staging = new FakeStaging();
  const sessions = new FakeSessions(join(dir, 'sessions'));
  const warnings: string[] = [];
  const r: Rig = {
    dir,
    db,
    store,
    backend,
    staging,
    sessions,
    warnings,
    ended: new Set(),
    clock: Date.now(),
    scheduler: undefined as unknown as Scheduler,
    submit(id, xrsl = '&(executable=/bin/true)', owner = '/CN=alice') {
      store.insertMany(newJobs([id], r.clock, xrsl, owner));
      r.scheduler.jobsSubmitted([id]);
    },
    job: (id) => store.get(id),
    flag(id, changes) {
      const j = store.get(id);
      assert.ok(j);
      assert.ok(JobStore.prototype.update.call(store, j, changes), 'flag set');
      r.scheduler.poke(id);
    },
  };
  const log = {
    debug() {},
    info() {},
    warn: (_o: object, m: string) => void warnings.push(m),
    error: (_o: object, m: string) => void warnings.push(m),
  };
  const scheduler = new Scheduler({
    store,
    control: new ControlDir(join(dir, 'control')),
    backend,
    staging,
    sessions,
    log,
    lrmsJobsRoot: join(dir, 'lrms'),
    rteScripts: new Map(),
    serviceUrl: () => 'https://ce.example.org/arex',
    sessionLifetimeSeconds: 3600,
    maxSessionLifetimeSeconds: 7200,
    wipedRetentionSeconds: 600,
    cancelTimeoutSeconds: 30,
    now: () => r.clock,
    // Due parked jobs are queued by scans at least this far apart (1 s in the service):
    // short here, so a due look is seen without waiting for the next scan.
    parkScanMs: 20,
    ...o,
    onTransition: (t) => {
      if (t.final) r.ended.add(t.id);
      o.onTransition?.(t);
    },
    limits: { maxPreparing: 0, maxRunning: 0, maxFinishing: 0, maxPerUser: 0, maxRunningPerUser: 0, ...o.limits },
  });
  (r as { scheduler: Scheduler }).scheduler = scheduler;
  rigs.push({ dir, scheduler, db });
  beforeStart?.(r);
  await scheduler.start();
  return r;
}

const stateOf = (r: Rig, id: string): string | undefined => r.job(id)?.restState;

/** Runs a job to INLRMS (RUNNING) with the fake backend. */
async function toRunning(r: Rig, id: string, xrsl?: string): Promise<string> {
  r.submit(id, xrsl);
  await until(() => r.backend.submits.some((s) => s.jobId === id) && stateOf(r, id) === 'QUEUING', `${id} submitted`);
  const localId = `L-${id}`;
  await r.backend.emit(localId, { kind: 'state', jobId: id, state: 'RUNNING' });
  assert.equal(stateOf(r, id), 'RUNNING');
  return localId;
}

const finalUpdate = (jobId: string, exitCode = 0): BatchUpdate => ({
  kind: 'final',
  jobId,
  result: {
    exitCode,
    wallTimeSeconds: 1,
    cpuTimeSeconds: 0,
    userTimeSeconds: 0,
    kernelTimeSeconds: 0,
    maxRssBytes: 0,
    startTime: null,
    endTime: null,
    nodes: [],
  },
});

describe('scheduler: compare-and-set', () => {
  it('a request that changes the job between read and write is not lost: the step is decided again from the fresh record', async () => {
    const r = await rig();
    r.staging.gateIn = true;
    let raced = 0;
    r.store.beforeUpdate = (expected, changes) => {
      // The engine is about to move the job into PREPARING: a kill request lands first.
      if (raced === 0 && changes.state === 'PREPARING') {
        raced++;
        const j = r.store.get(expected.id);
        assert.ok(j);
        assert.ok(JobStore.prototype.update.call(r.store, j, { killRequested: true }));
      }
    };
    r.submit('cas1');
    await until(() => r.job('cas1')?.state === 'FINISHED', 'the killed job to finish');
    const j = r.job('cas1');
    assert.equal(raced, 1);
    assert.equal(j?.outcome, 'killed', 'the kill that won the race is acted on');
    assert.equal(j?.restState, 'KILLED');
    assert.equal(j?.failedCause, 'client');
    assert.equal(j?.killRequested, false, 'the flag is cleared by acting on it');
    assert.ok(r.store.updates >= 2, 'the lost write was tried again');
  });

  it('a job that keeps changing is dropped after eight attempts and looked at again', async () => {
    const r = await rig();
    let bumps = 0;
    r.store.beforeUpdate = (expected, changes) => {
      if (changes.state !== 'PREPARING' || bumps >= 8) return;
      bumps++;
      const j = r.store.get(expected.id);
      assert.ok(j);
      // A change that decides nothing (the job's engine data), but moves the version on.
      assert.ok(JobStore.prototype.update.call(r.store, j, { engine: { note: bumps } }));
    };
    r.submit('busy1');
    await until(() => r.backend.submits.some((s) => s.jobId === 'busy1'), 'busy1 to reach the batch system at last');
    assert.equal(bumps, 8);
    assert.ok(r.warnings.includes('job kept changing; event dropped, will be looked at again'), r.warnings.join('; '));
  });
});

describe('scheduler: slots', () => {
  it('a full stage-in step holds new jobs (PENDING:ACCEPTED) and hands the slot on when it frees', async () => {
    const r = await rig({ limits: { maxPreparing: 1 } });
    r.staging.gateIn = true;
    r.submit('s1');
    await until(() => r.staging.ins.includes('s1'), 's1 staging in');
    r.submit('s2');
    await until(() => stateOf(r, 's2') === 'ACCEPTED', 's2 held before stage-in (REST ACCEPTED)');
    assert.equal(r.job('s2')?.pending, true);
    assert.deepEqual(r.staging.ins, ['s1']);
    // The state is stored first; the wait for a slot is queued after the state change is
    // filed in the job's `errors` file, an append that takes its time on a busy machine.
    await until(() => r.scheduler.waiting('PREPARING') === 1, 's2 waiting for a stage-in slot');
    r.staging.finishIn('s1');
    await until(() => r.staging.ins.includes('s2'), 's2 to get the freed slot');
    assert.equal(stateOf(r, 's2'), 'PREPARING');
    assert.equal(r.scheduler.waiting('PREPARING'), 0);
    await until(() => stateOf(r, 's1') === 'QUEUING', 's1 on to the batch system');
  });

  it('engine.maxActiveJobs keeps new jobs unprocessed (ACCEPTING) until an active one ends', async () => {
    const r = await rig({ limits: { maxActive: 1 } });
    const localId = await toRunning(r, 'a1');
    r.submit('a2');
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(stateOf(r, 'a2'), 'ACCEPTING');
    assert.deepEqual(r.staging.ins, ['a1']);
    await r.backend.emit(localId, finalUpdate('a1'));
    await until(() => stateOf(r, 'a1') === 'FINISHED', 'a1 finished');
    await until(() => r.staging.ins.includes('a2'), 'a2 picked up once a1 ended');
  });

  it('a full running step holds a staged job (PENDING:PREPARING) until the running job ends', async () => {
    const r = await rig({ limits: { maxRunning: 1 } });
    const localId = await toRunning(r, 'r1');
    r.submit('r2');
    await until(() => stateOf(r, 'r2') === 'PREPARED', 'r2 held after stage-in (REST PREPARED)');
    assert.equal(r.backend.submits.length, 1);
    await r.backend.emit(localId, finalUpdate('r1'));
    await until(() => r.backend.submits.some((s) => s.jobId === 'r2'), 'r2 submitted once r1 left the batch system');
  });
});

describe('scheduler: cancel', () => {
  it('a kill the batch system never confirms ends after the cancel timeout; the job stages out in cancel mode and ends KILLED', async () => {
    const r = await rig({ cancelTimeoutSeconds: 0.3 });
    const localId = await toRunning(r, 'k1');
    // Taken before the kill is asked: the timeout runs from the cancel, which comes after
    // it, so no poll's lateness on a busy machine can make the wait look shorter.
    const asked = Date.now();
    r.flag('k1', { killRequested: true });
    await until(() => r.backend.cancels.includes(localId), 'the batch job cancelled');
    assert.equal(stateOf(r, 'k1'), 'KILLING');
    await until(() => stateOf(r, 'k1') === 'KILLED', 'the job to end after the timeout', 10_000);
    // A Node timer may fire up to a millisecond early.
    assert.ok(Date.now() - asked >= 298, 'not before the timeout');
    assert.deepEqual(r.staging.outs, [{ id: 'k1', mode: 'cancel' }]);
    assert.equal(r.job('k1')?.failedCause, 'client');
  });

  it('a final update before the timeout ends the kill at once, and the timer does not act again', async () => {
    const r = await rig({ cancelTimeoutSeconds: 0.3 });
    const localId = await toRunning(r, 'k2');
    r.flag('k2', { killRequested: true });
    await until(() => r.backend.cancels.includes(localId), 'the batch job cancelled');
    await r.backend.emit(localId, finalUpdate('k2', 137));
    await until(() => stateOf(r, 'k2') === 'KILLED', 'k2 killed');
    const version = r.job('k2')?.version;
    await new Promise((res) => setTimeout(res, 500));
    assert.equal(r.job('k2')?.version, version, 'nothing moved the job after the timeout passed');
    assert.equal(r.staging.outs.length, 1);
  });

  it('a batch system that says the job is gone ends the kill without waiting', async () => {
    const r = await rig({ cancelTimeoutSeconds: 60 });
    r.backend.stillRunningOnCancel = false;
    await toRunning(r, 'k3');
    r.flag('k3', { killRequested: true });
    await until(() => stateOf(r, 'k3') === 'KILLED', 'k3 killed', 5_000);
  });
});

describe('scheduler: session lifetime', () => {
  it('a finished job is wiped when its lifetime ends, and its record purged after the retention', async () => {
    const r = await rig({ sweepIntervalMs: 30, wipedRetentionSeconds: 60 });
    const localId = await toRunning(r, 'l1');
    await r.backend.emit(localId, finalUpdate('l1'));
    await until(() => stateOf(r, 'l1') === 'FINISHED', 'l1 finished');
    const eraseAt = r.job('l1')?.eraseAt;
    assert.equal(eraseAt, r.clock + 3600 * 1000, 'the configured lifetime');
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(stateOf(r, 'l1'), 'FINISHED', 'not before its time');
    r.clock += 3600 * 1000 + 1;
    await until(() => stateOf(r, 'l1') === 'WIPED', 'l1 wiped');
    // The state is persisted before its effect: wait for the removal itself.
    await until(() => r.sessions.removed.includes('l1'), 'the session removed');
    assert.deepEqual([...r.sessions.removed], ['l1']);
    assert.equal(r.job('l1')?.eraseAt, r.clock + 60 * 1000);
    r.clock += 60 * 1000 + 1;
    await until(() => r.job('l1') === undefined, 'the wiped record purged');
  });

  it('a lifetime asked by the description is capped by the maximum', async () => {
    const r = await rig({ maxSessionLifetimeSeconds: 120 });
    const localId = await toRunning(r, 'l2', '&(executable=/bin/true)(lifetime="1 day")');
    assert.equal(r.job('l2')?.description.lifetimeSeconds, 86_400);
    await r.backend.emit(localId, finalUpdate('l2'));
    await until(() => stateOf(r, 'l2') === 'FINISHED', 'l2 finished');
    assert.equal(r.job('l2')?.eraseAt, r.clock + 120 * 1000);
  });
});

describe('scheduler: clean', () => {
  // One after the other, a clean was ~40 file operations in a row, each waiting for a turn
  // of a busy event loop: seconds per clean, and the engine fell behind the cleans asked for.
  it("removes the job's files side by side, and its record only after all of them", async () => {
    const r = await rig();
    const localId = await toRunning(r, 'c1');
    await r.backend.emit(localId, finalUpdate('c1'));
    await until(() => stateOf(r, 'c1') === 'FINISHED', 'c1 finished');
    const control = new ControlDir(join(r.dir, 'control')).jobDir('c1');
    assert.ok(existsSync(control), 'the job has control files');
    let open = (): void => undefined;
    r.sessions.removeGate = new Promise<void>((resolve) => (open = resolve));
    try {
      r.flag('c1', { cleanRequested: true });
      await until(() => r.sessions.removed.includes('c1'), 'session removal started');
      await until(() => !existsSync(control), 'control files removed while the session removal is under way');
      assert.ok(r.job('c1'), 'the record stays until every removal is done');
    } finally {
      open(); // a failed check must not leave the clean hanging for the next test
    }
    await until(() => r.job('c1') === undefined, 'the record removed last');
  });
});

/** Records each transition the scheduler reports, as `<id> <from>-><to>`. */
const transitions = (): { seen: string[]; onTransition: SchedulerOptions['onTransition'] } => {
  const seen: string[] = [];
  return { seen, onTransition: (t) => void seen.push(`${t.id} ${t.from}->${t.to}`) };
};

describe('scheduler: when a job entered its state', () => {
  it('is stored with each change of state and reported with the next one, the first from the submission', async () => {
    const seen: string[] = [];
    const r = await rig({ onTransition: (t) => void seen.push(`${t.from}->${t.to} ${t.enteredAt}`) });
    r.staging.skipEmptyStageIn = true;
    const t0 = Date.parse('2026-01-02T03:04:05.678Z');
    r.store.insertMany(newJobs(['e1'], t0 - 3_000));
    assert.equal(r.job('e1')?.stateEnteredAt, null, 'not moved yet: in ACCEPTED since its submission');
    r.clock = t0;
    r.scheduler.jobsSubmitted(['e1']);
    await until(() => stateOf(r, 'e1') === 'QUEUING', 'e1 submitted');
    // Read back from the database: what a restarted service times the stay in INLRMS from.
    assert.equal(r.job('e1')?.stateEnteredAt, t0);
    r.clock = t0 + 5_000;
    await r.backend.emit('L-e1', finalUpdate('e1'));
    await until(() => stateOf(r, 'e1') === 'FINISHED', 'e1 finished');
    assert.deepEqual(seen, [
      `ACCEPTED->PREPARING ${t0 - 3_000}`,
      `PREPARING->SUBMIT ${t0}`,
      `SUBMIT->INLRMS ${t0}`,
      `INLRMS->FINISHING ${t0}`,
      `FINISHING->FINISHED ${t0 + 5_000}`,
    ]);
    assert.equal(r.job('e1')?.stateEnteredAt, t0 + 5_000);
  });

  it('a job stored before entry times were is timed from its next state on', async () => {
    const seen: string[] = [];
    const r = await rig({ onTransition: (t) => void seen.push(`${t.from}->${t.to} ${t.enteredAt}`) });
    r.staging.skipEmptyStageIn = true;
    r.clock = Date.parse('2026-01-02T03:04:05.678Z');
    await toRunning(r, 'e2');
    // As the migration leaves a job stored by an older release: no entry time.
    r.db.prepare('UPDATE jobs SET state_entered_at = NULL WHERE id = ?').run('e2');
    r.clock += 5_000;
    await r.backend.emit('L-e2', finalUpdate('e2'));
    await until(() => stateOf(r, 'e2') === 'FINISHED', 'e2 finished');
    assert.deepEqual(seen.slice(-2), ['INLRMS->FINISHING undefined', `FINISHING->FINISHED ${r.clock}`]);
  });
});

describe('scheduler: a job killed before it was looked at', () => {
  /** A job stored and killed before the engine's first look at it. */
  const killNew = (r: Rig, id: string): void => {
    r.store.insertMany(newJobs([id], r.clock));
    r.flag(id, { killRequested: true });
  };

  it('with nothing to stage out: ended in one compare-and-set, each step logged, observed and filed in order', async () => {
    const control = new ControlDir(mkdtempSync(join(tmpdir(), 'ceres-killed-')));
    const t = transitions();
    const r = await rig({ control, onTransition: t.onTransition });
    r.staging.skipStageOut = true;
    r.clock = Date.parse('2026-01-02T03:04:05.678Z');
    killNew(r, 'k1');
    await until(() => stateOf(r, 'k1') === 'KILLED', 'k1 killed');
    assert.deepEqual(r.staging.outs, [], 'no stage-out was run');
    assert.equal(r.store.updates, 1);
    assert.deepEqual(t.seen, ['k1 ACCEPTED->CANCELING', 'k1 CANCELING->FINISHING', 'k1 FINISHING->FINISHED']);
    const read = (): string[] => readFileSync(control.file('k1', 'errors'), 'utf8').trim().split('\n');
    await until(() => existsSync(control.file('k1', 'errors')) && read().length === 3, 'the steps filed');
    assert.deepEqual(read(), [
      '2026-01-02T03:04:05Z Job state change ACCEPTED -> CANCELING   Reason: Job is canceled by external request',
      '2026-01-02T03:04:05Z Job state change CANCELING -> FINISHING   Reason: Job stopped',
      '2026-01-02T03:04:05Z Job state change FINISHING -> FINISHED   Reason: Stage-out finished',
    ]);
    assert.equal(r.job('k1')?.endedAt, r.clock, 'its end recorded');
    rmSync(control.root, { recursive: true, force: true });
  });

  it('with something to stage out: the stage-out runs, in a step of its own', async () => {
    const t = transitions();
    const r = await rig({ onTransition: t.onTransition });
    r.staging.gateOut = true;
    killNew(r, 'k2');
    await until(() => r.staging.outs.length === 1, 'k2 staging out');
    assert.deepEqual(r.staging.outs, [{ id: 'k2', mode: 'cancel' }]);
    assert.equal(stateOf(r, 'k2'), 'FINISHING');
    assert.equal(r.store.updates, 1, 'the cancel and the start of the stage-out in one');
    r.staging.finishOuts();
    await until(() => stateOf(r, 'k2') === 'KILLED', 'k2 killed');
    assert.equal(r.store.updates, 2);
    assert.deepEqual(t.seen, ['k2 ACCEPTED->CANCELING', 'k2 CANCELING->FINISHING', 'k2 FINISHING->FINISHED']);
  });
});

describe('scheduler: a stage-in with nothing to stage in', () => {
  it('is recorded with its start in one compare-and-set; both steps are logged, observed and filed in order', async () => {
    const control = new ControlDir(mkdtempSync(join(tmpdir(), 'ceres-merged-')));
    const t = transitions();
    const r = await rig({ control, onTransition: t.onTransition });
    r.staging.skipEmptyStageIn = true;
    r.clock = Date.parse('2026-01-02T03:04:05.678Z');
    r.submit('m1');
    await until(() => stateOf(r, 'm1') === 'QUEUING', 'm1 submitted');
    assert.deepEqual(r.staging.ins, [], 'no stage-in was run');
    // picked-up + stage-in done (1), submitted (2)
    assert.equal(r.store.updates, 2);
    assert.deepEqual(t.seen, ['m1 ACCEPTED->PREPARING', 'm1 PREPARING->SUBMIT', 'm1 SUBMIT->INLRMS']);
    // The line is filed after the state is stored: wait for it, not for the state.
    const read = (): string[] => readFileSync(control.file('m1', 'errors'), 'utf8').trim().split('\n');
    await until(() => read().length === 3, 'the submission filed');
    const lines = read();
    assert.deepEqual(lines, [
      '2026-01-02T03:04:05Z Job state change ACCEPTED -> PREPARING   Reason: Starting job processing',
      '2026-01-02T03:04:05Z Job state change PREPARING -> SUBMIT   Reason: Pre-staging finished, passing job to the batch system',
      '2026-01-02T03:04:05Z Job state change SUBMIT -> INLRMS   Reason: Job submitted to the batch system as L-m1',
    ]);
    rmSync(control.root, { recursive: true, force: true });
  });

  it('a job with an input file still stages it in, in its own step', async () => {
    const r = await rig();
    r.staging.skipEmptyStageIn = true;
    r.staging.gateIn = true;
    r.submit('m2', '&(executable=/bin/true)(inputfiles=("in.txt" ""))');
    await until(() => r.staging.ins.includes('m2'), 'm2 staging in');
    assert.equal(stateOf(r, 'm2'), 'PREPARING');
    r.staging.finishIn('m2');
    await until(() => stateOf(r, 'm2') === 'QUEUING', 'm2 submitted');
  });

  it('a job with neither input nor executable goes to stage-out in the same step', async () => {
    const t = transitions();
    const r = await rig({ onTransition: t.onTransition });
    r.staging.skipEmptyStageIn = true;
    r.submit('m3', '&(stdout=out)');
    await until(() => stateOf(r, 'm3') === 'FINISHED', 'm3 finished');
    assert.deepEqual(r.staging.ins, []);
    assert.deepEqual(r.backend.submits, [], 'nothing to run');
    assert.deepEqual(t.seen, ['m3 ACCEPTED->PREPARING', 'm3 PREPARING->FINISHING', 'm3 FINISHING->FINISHED']);
  });

  it('a full running step holds the job after the merged step (PENDING:PREPARING), and releases it later', async () => {
    const r = await rig({ limits: { maxRunning: 1 } });
    r.staging.skipEmptyStageIn = true;
    const localId = await toRunning(r, 'h1');
    r.submit('h2');
    await until(() => stateOf(r, 'h2') === 'PREPARED', 'h2 held (REST PREPARED)');
    assert.equal(r.backend.submits.length, 1);
    await r.backend.emit(localId, finalUpdate('h1'));
    await until(() => r.backend.submits.some((s) => s.jobId === 'h2'), 'h2 submitted once h1 left');
  });

  it('a kill that lands before the merged write is not lost: the step is decided again and the kill acted on', async () => {
    const r = await rig();
    r.staging.skipEmptyStageIn = true;
    r.backend.stillRunningOnCancel = false;
    let raced = 0;
    r.store.beforeUpdate = (expected, changes) => {
      if (raced === 0 && changes.state === 'SUBMIT') {
        raced++;
        const j = r.store.get(expected.id);
        assert.ok(j);
        assert.ok(JobStore.prototype.update.call(r.store, j, { killRequested: true }));
      }
    };
    r.submit('k9');
    await until(() => r.job('k9')?.state === 'FINISHED', 'the killed job to finish');
    assert.equal(raced, 1);
    assert.equal(r.job('k9')?.restState, 'KILLED');
    assert.equal(r.job('k9')?.killRequested, false);
  });

  it('a service that dies right after the merged write resumes the job from SUBMIT and runs it exactly once', async () => {
    const r = await rig();
    r.staging.skipEmptyStageIn = true;
    let asked = 0;
    // The first instance dies before the batch system answers: its submit never returns.
    r.backend.submit = () => {
      asked++;
      return new Promise<string>(() => undefined);
    };
    r.submit('c1');
    await until(() => asked === 1, 'the first submit under way');
    assert.equal(r.job('c1')?.state, 'SUBMIT');
    assert.equal(r.job('c1')?.restState, 'SUBMITTING');
    const backend = new FakeBackend();
    const dir = mkdtempSync(join(tmpdir(), 'ceres-merged-restart-'));
    const again = new Scheduler({
      store: r.store,
      control: new ControlDir(join(dir, 'control')),
      backend,
      staging: r.staging,
      sessions: r.sessions,
      log: { debug() {}, info() {}, warn() {}, error() {} },
      lrmsJobsRoot: join(dir, 'lrms'),
      rteScripts: new Map(),
      serviceUrl: () => 'https://ce.example.org/arex',
      sessionLifetimeSeconds: 3600,
      maxSessionLifetimeSeconds: 7200,
      wipedRetentionSeconds: 600,
      cancelTimeoutSeconds: 30,
      limits: { maxPreparing: 0, maxRunning: 0, maxFinishing: 0, maxPerUser: 0, maxRunningPerUser: 0 },
    });
    try {
      await again.start();
      await until(() => stateOf(r, 'c1') === 'QUEUING', 'c1 submitted by the new instance');
      await backend.emit('L-c1', { kind: 'state', jobId: 'c1', state: 'RUNNING' });
      await backend.emit('L-c1', finalUpdate('c1'));
      await until(() => stateOf(r, 'c1') === 'FINISHED', 'c1 finished');
      assert.deepEqual(
        backend.submits.map((s) => s.jobId),
        ['c1'],
      );
      assert.deepEqual(r.staging.ins, [], 'the resumed job is not staged in either');
    } finally {
      await again.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('scheduler: a backend that runs a job once submitted (runsOnSubmit)', () => {
  it('the submission is recorded as RUNNING in one write; the RUNNING update that follows writes nothing', async () => {
    const r = await rig();
    r.backend.runsOnSubmit = true;
    r.staging.skipEmptyStageIn = true;
    r.submit('ro1');
    await until(() => stateOf(r, 'ro1') === 'RUNNING', 'ro1 running');
    assert.equal(r.store.updates, 2, 'picked up and staged in (1), submitted and running (2)');
    assert.notEqual(r.job('ro1')?.startedAt, null, 'the start time is recorded with it');
    await r.backend.emit('L-ro1', { kind: 'state', jobId: 'ro1', state: 'RUNNING' });
    assert.equal(r.store.updates, 2);
    await r.backend.emit('L-ro1', finalUpdate('ro1'));
    await until(() => stateOf(r, 'ro1') === 'FINISHED', 'ro1 finished');
    assert.equal(r.store.updates, 4);
  });

  it('a later batch state that differs (the job held) is still recorded', async () => {
    const r = await rig();
    r.backend.runsOnSubmit = true;
    r.submit('ro2');
    await until(() => stateOf(r, 'ro2') === 'RUNNING', 'ro2 running');
    await r.backend.emit('L-ro2', { kind: 'state', jobId: 'ro2', state: 'HELD' });
    assert.equal(r.job('ro2')?.lrmsState, 'HELD');
    await r.backend.emit('L-ro2', { kind: 'state', jobId: 'ro2', state: 'RUNNING' });
    assert.equal(r.job('ro2')?.lrmsState, 'RUNNING');
  });

  it("the batch system's reason is stored when it changes, alone or with the state, and goes when the job runs", async () => {
    const r = await rig();
    r.submit('br1');
    await until(
      () => r.backend.submits.some((s) => s.jobId === 'br1') && stateOf(r, 'br1') === 'QUEUING',
      'br1 queued',
    );
    assert.equal(r.job('br1')?.batchReason, null);
    await r.backend.emit('L-br1', { kind: 'state', jobId: 'br1', state: 'QUEUING', reason: 'Priority' });
    assert.equal(r.job('br1')?.batchReason, 'Priority', 'a reason alone, the state unchanged');
    const writes = r.store.updates;
    await r.backend.emit('L-br1', { kind: 'state', jobId: 'br1', state: 'QUEUING', reason: 'Priority' });
    assert.equal(r.store.updates, writes, 'the same reason again writes nothing');
    await r.backend.emit('L-br1', { kind: 'state', jobId: 'br1', state: 'QUEUING', reason: 'Resources' });
    assert.equal(r.job('br1')?.batchReason, 'Resources');
    await r.backend.emit('L-br1', { kind: 'state', jobId: 'br1', state: 'HELD', reason: 'JobHeldAdmin' });
    assert.deepEqual([r.job('br1')?.lrmsState, r.job('br1')?.batchReason], ['HELD', 'JobHeldAdmin'], 'with the state');
    await r.backend.emit('L-br1', { kind: 'state', jobId: 'br1', state: 'RUNNING' });
    assert.deepEqual([r.job('br1')?.lrmsState, r.job('br1')?.batchReason], ['RUNNING', null]);
  });

  it('an update naming another batch id (an earlier attempt) is not taken for the current one', async () => {
    const r = await rig();
    r.backend.runsOnSubmit = true;
    r.submit('ro3');
    await until(() => stateOf(r, 'ro3') === 'RUNNING', 'ro3 running');
    const before = r.store.updates;
    await r.backend.emit('L-old', finalUpdate('ro3'));
    assert.equal(stateOf(r, 'ro3'), 'RUNNING', 'refused by the state machine');
    assert.equal(r.store.updates, before);
  });
});

/** New unprocessed jobs of one owner, as a bulk submission stores them. */
function newJobs(
  ids: readonly string[],
  createdAt: number,
  xrsl = '&(executable=/bin/true)',
  owner = '/CN=alice',
): NewJob[] {
  const parsed = parseXrsl(xrsl);
  assert.ok(parsed.ok);
  return ids.map((id) =>
    newJobRow(id, owner, { queue: 'main', description: parsed.description, raw: xrsl, createdAt }),
  );
}

describe('scheduler: new jobs are looked at in bounded numbers', () => {
  /** Stores `n` new jobs as one submission and tells the scheduler, as a bulk POST does. */
  function bulk(r: Rig, prefix: string, n: number): string[] {
    const ids = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    r.store.insertMany(newJobs(ids, r.clock));
    r.scheduler.jobsSubmitted(ids);
    return ids;
  }

  it('3,000 jobs in one submission: a bounded number is in flight, and every one is picked up', async () => {
    const r = await rig();
    r.staging.gateIn = true;
    const ids = bulk(r, 'b', 3000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(r.scheduler.incoming >= 3000 - 64, `${r.scheduler.incoming} still waiting for a first look`);
    await until(() => r.staging.ins.length === 3000, 'every job picked up and its stage-in started', 60_000);
    assert.equal(r.scheduler.incoming, 0);
    assert.deepEqual([...r.staging.ins].sort(), [...ids].sort());
    assert.ok(ids.every((id) => stateOf(r, id) === 'PREPARING'));
  });

  it('a stage-in keeps its pickup slot until the session is checked: no more than 64 wait for their directories', async () => {
    const r = await rig();
    r.staging.gateIn = true;
    r.staging.holdSessionChecks = true;
    const ids = bulk(r, 'h', 500);
    await until(() => r.staging.ins.length === 64, 'the first 64 stage-ins started', 60_000);
    // Nothing more starts while their session checks are held.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(r.staging.ins.length, 64);
    assert.equal(r.staging.heldSessionChecks, 64);
    assert.equal(r.scheduler.incoming, 500 - 64);
    // Released as they are checked: all are picked up in the end, none lost.
    for (let round = 0; r.staging.ins.length < 500 && round < 100; round++) {
      r.staging.checkSessions();
      await until(() => r.staging.ins.length === Math.min(500, 64 * (round + 2)), `round ${round + 1} started`, 60_000);
    }
    r.staging.checkSessions();
    assert.deepEqual([...r.staging.ins].sort(), [...ids].sort());
    assert.equal(r.scheduler.incoming, 0);
  });

  it('a kill of a job still waiting for its first look is carried out, and the later look changes nothing', async () => {
    const r = await rig();
    r.staging.gateIn = true;
    const ids = bulk(r, 'k', 500);
    const last = ids[ids.length - 1]!;
    r.flag(last, { killRequested: true });
    await until(() => r.staging.ins.length === 499, 'the others picked up', 60_000);
    await until(() => stateOf(r, last) === 'KILLED', 'the killed job ended');
    assert.equal(r.scheduler.incoming, 0);
    assert.ok(!r.staging.ins.includes(last), 'the killed job was never staged');
  });

  it('a bulk kill of 2,000 jobs: a bounded number is worked on at once, each poke is looked at once, and every job ends KILLED', async () => {
    // Counts the jobs whose state change is being filed at once: each step of a job files one.
    class CountingControl extends ControlDir {
      now = 0;
      max = 0;
      override async append(id: string, name: string, content: string): Promise<void> {
        this.max = Math.max(this.max, ++this.now);
        try {
          await new Promise((res) => setTimeout(res, 1));
          await super.append(id, name, content);
        } finally {
          this.now--;
        }
      }
    }
    const dir = mkdtempSync(join(tmpdir(), 'ceres-scheduler-control-'));
    const control = new CountingControl(join(dir, 'control'));
    const r = await rig({ control });
    r.staging.missingUploads.clear();
    const ids = bulk(r, 'x', 2000).map((id) => {
      r.staging.missingUploads.set(id, 60_000);
      return id;
    });
    await until(() => r.scheduler.parked === 2000, 'every job parked, waiting for an upload', 60_000);
    control.max = 0;
    for (const id of ids) {
      const j = r.job(id);
      assert.ok(j);
      assert.ok(JobStore.prototype.update.call(r.store, j, { killRequested: true }));
      r.scheduler.poke(id);
      r.scheduler.poke(id); // a second request before the first was looked at adds nothing
    }
    assert.equal(r.scheduler.pokesWaiting, 2000);
    await until(() => r.ended.size === ids.length, 'every job ended', 300_000);
    assert.ok(
      ids.every((id) => stateOf(r, id) === 'KILLED'),
      'every job killed',
    );
    // Each job files its steps (PREPARING -> CANCELING, then -> FINISHING, -> FINISHED) in
    // its own chain; the first two belong to the poke, the last follows its stage-out.
    assert.ok(control.max <= 2 * 64, `${control.max} jobs filing a state change at once`);
    assert.equal(r.staging.looks.filter((l) => l.aborted).length, 2000, 'each parked wait aborted once');
    rmSync(dir, { recursive: true, force: true });
  });

  it('unprocessed jobs found at start are all looked at, through the same bounded queue', async () => {
    // Stored but never looked at (the service died right after the 201s).
    const ids = Array.from({ length: 1000 }, (_, i) => `s${i}`);
    const r = await rig({
      beforeStart(x) {
        x.staging.gateIn = true;
        x.store.insertMany(newJobs(ids, x.clock));
      },
    });
    await until(() => r.staging.ins.length === 1000, 'every stored job picked up after the start', 60_000);
    assert.deepEqual([...r.staging.ins].sort(), [...ids].sort());
  });
});

describe('scheduler: jobs waiting for client uploads are parked between looks', () => {
  const looksAt = (r: Rig, id: string): number => r.staging.looks.filter((l) => l.id === id).length;
  /** `n` new jobs whose uploads stay missing, parked after their first look; due again `dueMs` later. */
  async function parkedJobs(r: Rig, prefix: string, n: number, dueMs = 1000): Promise<string[]> {
    const ids = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    for (const id of ids) r.staging.missingUploads.set(id, dueMs);
    r.store.insertMany(newJobs(ids, r.clock));
    r.scheduler.jobsSubmitted(ids);
    await until(() => r.scheduler.parked === n, `all ${n} parked after their first look`, 60_000);
    return ids;
  }

  it('a job whose uploads are missing holds no stage-in between looks; an upload poke looks again and moves it on', async () => {
    const r = await rig();
    r.staging.missingUploads.set('u1', 60_000);
    r.submit('u1');
    await until(() => r.scheduler.parked === 1, 'u1 parked after its first look');
    assert.equal(stateOf(r, 'u1'), 'PREPARING');
    const since = r.job('u1')?.updatedAt;
    assert.deepEqual(r.staging.looks, [{ id: 'u1', aborted: false, since }]);
    // Another look is due only after 60 s: nothing happens meanwhile.
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(looksAt(r, 'u1'), 1);
    r.staging.missingUploads.delete('u1');
    r.scheduler.poke('u1'); // the upload completed (the service pokes the job)
    await until(() => r.backend.submits.some((s) => s.jobId === 'u1'), 'u1 submitted');
    assert.equal(r.scheduler.parked, 0);
  });

  it('the look counts the upload wait from when the job entered PREPARING, not from the look', async () => {
    const r = await rig();
    r.staging.missingUploads.set('u2', 60_000);
    r.submit('u2');
    await until(() => r.scheduler.parked === 1, 'u2 parked');
    const since = r.job('u2')?.updatedAt;
    r.clock += 5000;
    r.flag('u2', {}); // the record changes (updatedAt moves); the wait does not start again
    await until(() => looksAt(r, 'u2') === 2, 'u2 looked at again');
    assert.equal(r.staging.looks[1]?.since, since);
  });

  it('a parked job is looked at again when its time comes, without a poke', async () => {
    const r = await rig();
    r.staging.missingUploads.set('u3', 50);
    r.submit('u3');
    await until(() => looksAt(r, 'u3') >= 3, 'u3 looked at again by the timer', 10_000);
    assert.equal(stateOf(r, 'u3'), 'PREPARING');
  });

  it('a kill of a parked job runs the look aborted, so the job ends as an aborted wait did', async () => {
    const r = await rig();
    r.staging.missingUploads.set('u4', 60_000);
    r.submit('u4');
    await until(() => r.scheduler.parked === 1, 'u4 parked');
    r.flag('u4', { killRequested: true });
    await until(() => stateOf(r, 'u4') === 'KILLED', 'u4 killed');
    assert.deepEqual(
      r.staging.looks.map((l) => l.aborted),
      [false, true],
    );
    assert.deepEqual(r.staging.outs, [{ id: 'u4', mode: 'cancel' }]);
    assert.equal(r.scheduler.parked, 0);
  });

  it('300 parked jobs due at once: at most 64 looks run, the rest wait as ids, every job is looked at again', async () => {
    const r = await rig();
    const ids = await parkedJobs(r, 'd', 300);
    // The looks each job had until all were parked (on a busy machine the first may come
    // due, and be looked at again, before the last is parked).
    const parkedAfter = new Map(ids.map((id) => [id, looksAt(r, id)]));
    r.staging.holdLooks = true;
    await until(() => r.staging.heldLooks === 64, 'the first 64 due looks started', 10_000);
    const started = r.staging.looks.length;
    // Nothing more starts while those are held, however long they take: over a dozen
    // scans for due jobs pass meanwhile (parkScanMs).
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(r.staging.heldLooks, 64);
    assert.equal(r.staging.looks.length, started, 'no look started while 64 were held');
    const lookedAgain = (): boolean => ids.every((id) => looksAt(r, id) > parkedAfter.get(id)!);
    while (!lookedAgain()) {
      r.staging.endLooks();
      await new Promise((res) => setTimeout(res, 5));
    }
    r.staging.endLooks();
    assert.equal(r.staging.maxLooksHeld, 64);
  });

  it('a kill of a parked job waiting for its due look is carried out at once, and its turn is skipped', async () => {
    const r = await rig();
    const ids = await parkedJobs(r, 'q', 70);
    r.staging.holdLooks = true;
    await until(() => r.staging.heldLooks === 64, '64 due looks under way', 10_000);
    const waiting = ids.find((id) => looksAt(r, id) === 1);
    assert.ok(waiting);
    r.flag(waiting, { killRequested: true });
    await until(() => stateOf(r, waiting) === 'KILLED', 'the waiting job killed without its turn');
    assert.deepEqual(
      r.staging.looks.filter((l) => l.id === waiting).map((l) => l.aborted),
      [false, true],
    );
    r.staging.holdLooks = false;
    r.staging.endLooks();
    await until(() => ids.every((id) => id === waiting || looksAt(r, id) >= 2), 'the others looked at again', 10_000);
    assert.equal(looksAt(r, waiting), 2, 'the killed job was not looked at in its old turn');
  });

  it('a kill asked while the service was down reaches the backend after it has taken its jobs back', async () => {
    // The fork backend answers a cancel of a job it does not hold "not running": a cancel
    // sent before recover() had finished ended the job while its processes ran on.
    const r = await rig({
      beforeStart(x) {
        x.backend.recoverMs = 200;
        x.backend.cancelOnlyHeld = true;
        x.store.insertMany(newJobs(['rk'], x.clock));
        const j = x.store.get('rk');
        assert.ok(j);
        const changes: JobChanges = {
          state: 'INLRMS',
          restState: 'RUNNING',
          lrmsState: 'RUNNING',
          localId: 'L-rk',
          killRequested: true,
        };
        assert.ok(JobStore.prototype.update.call(x.store, j, changes));
      },
    });
    await until(() => r.backend.cancels.includes('L-rk'), 'the kill reached the backend', 10_000);
    assert.deepEqual(r.backend.cancelsUnheld, [], 'no cancel before the job was taken back');
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(r.job('rk')?.state, 'CANCELING', 'waits for the batch system to confirm the cancel');
  });

  it('300 jobs found in PREPARING at start: their stage-ins start 64 at a time, each once', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `p${i}`);
    const r = await rig({
      beforeStart(x) {
        for (const id of ids) x.staging.missingUploads.set(id, 60_000);
        x.staging.holdLooks = true;
        x.store.insertMany(newJobs(ids, x.clock).map((j) => ({ ...j, state: 'PREPARING', restState: 'PREPARING' })));
      },
    });
    await until(() => r.staging.heldLooks === 64, 'the first 64 stage-ins started', 10_000);
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(r.staging.looks.length, 64);
    while (r.staging.looks.length < 300) {
      r.staging.endLooks();
      await new Promise((res) => setTimeout(res, 5));
    }
    r.staging.endLooks();
    assert.equal(r.staging.maxLooksHeld, 64);
    assert.deepEqual([...r.staging.looks.map((l) => l.id)].sort(), [...ids].sort(), 'each job looked at once');
    await until(() => r.scheduler.parked === 300, 'all parked for their next look');
  });

  it('an upload poke while a look is under way is not lost: the job is looked at again', async () => {
    const r = await rig();
    r.staging.missingUploads.set('u5', 60_000);
    r.staging.duringLook = (id) => {
      if (looksAt(r, id) !== 1) return;
      r.staging.missingUploads.delete(id); // the upload lands right after the look saw nothing
      r.scheduler.poke(id);
    };
    r.submit('u5');
    await until(() => r.backend.submits.some((s) => s.jobId === 'u5'), 'u5 submitted without waiting for the timer');
    assert.equal(r.scheduler.parked, 0);
  });

  it('a kill while the look is under way aborts it', async () => {
    const r = await rig();
    r.staging.missingUploads.set('u6', 60_000);
    r.staging.duringLook = (id) => {
      if (looksAt(r, id) === 1) r.flag(id, { killRequested: true });
    };
    r.submit('u6');
    await until(() => stateOf(r, 'u6') === 'KILLED', 'u6 killed');
    assert.equal(r.scheduler.parked, 0);
  });
});

describe('scheduler: stage-outs start in bounded numbers', () => {
  /** `n` jobs whose batch jobs all end at once; their stage-outs wait for finishOuts(). */
  async function toFinishing(r: Rig, prefix: string, n: number): Promise<string[]> {
    r.staging.gateOut = true;
    const ids = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    r.store.insertMany(newJobs(ids, r.clock));
    r.scheduler.jobsSubmitted(ids);
    await until(() => r.backend.submits.length === n, 'every job submitted', 60_000);
    for (const id of ids) await r.backend.emit(`L-${id}`, finalUpdate(id));
    return ids;
  }

  it('300 jobs reaching FINISHING at once: at most 64 stage-outs run, the rest wait as ids, every job ends', async () => {
    const r = await rig();
    const ids = await toFinishing(r, 'o', 300);
    await until(() => r.staging.outsRunning === 64 && r.scheduler.stageOutsWaiting === 236, '64 running, 236 waiting');
    while (r.ended.size < ids.length) {
      r.staging.finishOuts();
      await new Promise((res) => setTimeout(res, 10));
    }
    assert.ok(
      ids.every((id) => stateOf(r, id) === 'FINISHED'),
      'every job finished',
    );
    assert.equal(r.staging.maxOutsRunning, 64);
    assert.equal(r.scheduler.stageOutsWaiting, 0);
    assert.equal(r.staging.outs.length, 300, 'each job staged out once');
  });

  it('a kill of a job whose stage-out waits for its turn runs it aborted at once', async () => {
    const r = await rig();
    const ids = await toFinishing(r, 'w', 65);
    await until(() => r.scheduler.stageOutsWaiting === 1, 'one stage-out waiting');
    const waiting = ids.find((id) => !r.staging.outs.some((o) => o.id === id));
    assert.ok(waiting);
    r.flag(waiting, { killRequested: true });
    await until(() => stateOf(r, waiting) === 'FAILED' || stateOf(r, waiting) === 'KILLED', 'the killed job ended');
    assert.deepEqual(r.staging.abortedOuts, [waiting]);
    assert.equal(r.scheduler.stageOutsWaiting, 0);
    r.staging.finishOuts();
  });
});
