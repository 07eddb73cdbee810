/**
 * The scheduler: moves jobs through their steps, event-driven (a job moves the moment
 * its step completes; nothing waits for a timer), with bounded concurrency per step.
 *
 * Invariants:
 *  - The state machine (../state-machine.ts) decides; the scheduler only applies.
 *  - A transition is persisted (compare-and-set on the record's version) BEFORE any of
 *    its effects start. If the CAS loses (a REST request changed the job meanwhile),
 *    the job is looked at again from the fresh record.
 *  - Work on one job is serialised (one chain per job); different jobs run concurrently.
 *  - Everything in memory (slot counters, waiting queues, in-flight transfers) is
 *    rebuilt from the store at start: after `kill -9`, `start()` resumes each job from
 *    its recorded state. Re-doing an interrupted step is safe: stage-in and stage-out
 *    are idempotent, a batch submission reuses its attempt directory (the backend
 *    never starts a second copy), batch jobs outlive the service and are recovered.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BatchBackend, BatchJobRef, BatchUpdate } from '../../lrms/backend.js';
import { readJobFile } from '../../lrms/job-file.js';
import type { JobStore } from '../../store/job-store.js';
import type { JobChanges, JobRecord } from '../../store/job-record.js';
import type { ControlDir } from '../../store/control-dir.js';
import { logLine } from '../../store/control-dir.js';
import {
  next,
  requestedEvent,
  resumeEffects,
  type Effect,
  type EngineEvent,
  type SlotStep,
  type StageOutMode,
  type Transition,
} from '../state-machine.js';
import { isFinal, machineStateOf, persistedFields, type MachineState } from '../states.js';
import { ACTIVE_STATES, positionOf, type Position } from '../../vocabulary/job-states.js';
import { batchUpdateEvent } from '../batch-events.js';
import { Slots, type Limits } from './slots.js';
import { attemptDir, batchSpec } from './batch-spec.js';
import type { SessionsPort, StagingPort } from './ports.js';
import { IdQueue } from './id-queue.js';

export interface SchedulerLog {
  debug(o: object, m: string): void;
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

export interface SchedulerOptions {
  readonly store: JobStore;
  readonly control: ControlDir;
  readonly backend: BatchBackend;
  readonly staging: StagingPort;
  readonly limits: Limits;
  readonly log: SchedulerLog;
  /** Session directories: checked and link-safe (session-dirs.ts); the plain path only for the batch backend. */
  readonly sessions: SessionsPort;
  /** Root for per-attempt backend directories. */
  readonly lrmsJobsRoot: string;
  readonly rteScripts: ReadonlyMap<string, string | undefined>;
  /** The account of jobs stored without one, on a root service (batch-spec.ts). */
  readonly defaultAccount?: string | undefined;
  readonly serviceUrl: () => string;
  /** Default and maximum session lifetime after the job ended (seconds). */
  readonly sessionLifetimeSeconds: number;
  readonly maxSessionLifetimeSeconds: number;
  /** How long the minimal record of a wiped job stays (seconds). */
  readonly wipedRetentionSeconds: number;
  readonly cancelTimeoutSeconds: number;
  /** Lifetime sweep period (ms). */
  readonly sweepIntervalMs?: number;
  /** A job run reached a final state (persisted): its accounting record is written here. */
  readonly onEnded?: (job: JobRecord) => Promise<unknown>;
  readonly now?: () => number;
  /**
   * Told of every change of a job's position, after it is persisted (metrics), with when
   * the job entered `from` (undefined: not known, a job stored before entry times were).
   */
  readonly onTransition?: (t: {
    readonly id: string;
    readonly from: Position;
    readonly to: Position;
    readonly final: boolean;
    readonly enteredAt: number | undefined;
  }) => void;
  /** The job's copy of its delegated credential (src/accounts/job-credentials.ts); absent: none is given. */
  readonly credentials?: JobCredentialsPort;
  /**
   * A job that asked for a log directory (xRSL `gmlog`) changed state: its `errors` lines are
   * written; called before the step's effects (stage-out keeps the directory, src/jobs/gmlog.ts).
   */
  readonly onLogged?: (job: JobRecord) => Promise<void>;
}

/** One state change of a (possibly merged) transition. */
interface MergedStep {
  readonly from: Position;
  readonly to: Position;
  readonly reason: string;
  readonly final: boolean;
}

/** What one compare-and-set records: the last state, all effects in order, every step. */
interface Merged {
  readonly to: MachineState;
  readonly effects: readonly Effect[];
  readonly steps: readonly MergedStep[];
}

/** What the scheduler asks of the job credential copies. */
export interface JobCredentialsPort {
  /** Places the copy for the batch run; the environment entries naming it. */
  place(
    jobId: string,
    delegationId: string | null,
    owner: string,
    account: string | undefined,
  ): Promise<{ name: string; value: string }[]>;
  remove(jobId: string): Promise<void>;
}

export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #now: () => number;
  readonly #slots: Slots;
  /** Per-job chains serialising all work on one job. */
  readonly #chains = new Map<string, Promise<void>>();
  /** In-flight transfers, abortable (kill, shutdown). */
  readonly #transfers = new Map<string, AbortController>();
  readonly #cancelTimers = new Map<string, NodeJS.Timeout>();
  readonly #expiry = new Map<string, NodeJS.Timeout>();
  #sweep: NodeJS.Timeout | undefined;
  /**
   * Jobs in PREPARING waiting for client uploads between two looks at them (the staging
   * port's `lookOnce`): when they entered PREPARING and when to look again. A wait used to
   * be a suspended stage-in (the record, a chain of async calls, an abort controller, a
   * timer, upload listeners): ~10 KiB per job, 20,000 parked jobs held ~150 MiB
   * (docs/performance.md, "Memory"). Now a job is looked at again when poked (an upload
   * completed) or by the one shared timer, and aborting a parked wait (kill) runs the
   * look with an aborted signal, so it reports exactly as an aborted wait did.
   */
  readonly #parked = new Map<string, Parked>();
  /**
   * Parked jobs whose next look is due, in order (ids; each job's Parked entry says it is
   * queued). At most RELOOKS_IN_FLIGHT looks run at once, each holding its slot until the
   * look ends: after a restart with 100,000 parked jobs, or a fill whose jobs all came due
   * in the same second, the timer used to start every due look at once, each holding its
   * record while it waited for the disk (docs/performance.md, "A store fill's catch-up").
   */
  readonly #due = new IdQueue();
  #relooksInFlight = 0;
  #parkTimer: NodeJS.Timeout | undefined;
  #parkTimerAt = Infinity;
  /** Jobs poked while a look at their uploads was under way: looked at again instead of parked. */
  readonly #pokedDuringLook = new Set<string>();
  /**
   * New jobs not yet looked at, in order (ids only), and how many first looks are in
   * flight. A bulk POST of 1,000 jobs used to start 1,000 chains at once, each holding
   * its record and closures while it waited for the disk; during a flood those piled up
   * to ~7 KB per submitted job (docs/performance.md, "Memory"). At most PICKUP_IN_FLIGHT
   * run now; the rest wait here as ids. Nothing is lost by a crash: the jobs are
   * stored, and start() looks at every unprocessed one again.
   */
  readonly #incoming = new IdQueue();
  #pickupsInFlight = 0;
  /**
   * The slot of a job whose look is under way (a first look or a due re-look), taken by
   * the stage-in the look starts: a first look's is freed once the job's session is
   * checked (`untilChecked`), a re-look's when the look ends.
   */
  readonly #lookSlots = new Map<string, { readonly free: () => void; readonly untilChecked: boolean }>();
  #pumpQueued = false;
  /**
   * Jobs poked (a kill, clean or restart asked, an upload completed), waiting for their
   * look in order, each once (a look reads the fresh record, so later pokes of a job still
   * waiting add nothing); at most POKES_IN_FLIGHT jobs are worked on for a poke at once,
   * each until its chain of steps is done. A bulk kill of 1,000 jobs used to start 1,000
   * chains at once; while a store fill killed jobs faster than the disk let the engine
   * finish them, the heap grew to ~1 GB (docs/performance.md, "Memory"). Nothing is lost
   * by a crash: the flags are stored, and start() pokes every flagged job again.
   */
  readonly #poked = new IdQueue();
  readonly #pokedWaiting = new Set<string>();
  #pokesInFlight = 0;
  /**
   * Stage-outs waiting to start, in order: job id -> mode. At most STAGE_OUTS_IN_FLIGHT run
   * (the stager's own job slots order them further). A flood of killed jobs used to start
   * every stage-out at once, each a suspended chain of calls holding its record while it
   * waited for a slot or a session check: 18,000 of them were ~170 MiB of heap with
   * 20,000 jobs killed (docs/performance.md, "Memory"). A kill of a waiting stage-out
   * runs it aborted at once, so it reports as an aborted one did.
   */
  readonly #outQueue = new IdQueue();
  readonly #outWaiting = new Map<string, StageOutMode>();
  #outsInFlight = 0;
  #stopping = false;
  #releasing = false;

  constructor(o: SchedulerOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.#slots = new Slots(o.limits);
    o.backend.onUpdate((localId, u) => this.#onBatchUpdate(localId, u));
  }

  /**
   * Resume every job from its recorded state (service start, also after kill -9), as
   * the state machine's `resumeEffects` says. Batch jobs are handed to the backend's
   * `recover()` in one call BEFORE any cancel is issued, so a job killed while the
   * service was down is cancelled by a backend that knows it.
   */
  async start(): Promise<void> {
    const active = this.#o.store.listByStates(ACTIVE_STATES);
    for (const j of active) this.#slots.set(j.id, j.owner, positionOf(ms(j)));
    const refs: BatchJobRef[] = [];
    const later: [JobRecord, Effect[]][] = [];
    // Kills asked while the service was down are looked at once the backend has taken
    // its jobs back: a cancel that reached it first found no job to stop, was answered
    // "not running", and the job ended while its processes ran on.
    const kills: string[] = [];
    for (const j of active) {
      const m = ms(j);
      if (m.state === 'ACCEPTED' && !m.pending) this.#incoming.push(j.id);
      const effects = resumeEffects(m).filter((e) => {
        if (e.type !== 'recover-batch-job') return true;
        refs.push({
          jobId: j.id,
          localId: e.localId,
          sessionDir: this.#o.sessions.pathOf(j.id),
          lrmsDir: attemptDir(this.#o.lrmsJobsRoot, j),
        });
        return false;
      });
      if (effects.length === 1 && effects[0]?.type === 'start-stage-in') {
        // In turn with the due looks (#due), as ids: a restart with 100,000 jobs in
        // PREPARING does not start 100,000 stage-ins at once.
        this.#parked.set(j.id, { since: j.updatedAt, at: 0, queued: true });
        this.#due.push(j.id);
      } else if (effects.length) later.push([j, effects]);
      if (j.killRequested) kills.push(j.id);
    }
    await this.#o.backend.recover(refs);
    for (const id of kills) this.poke(id);
    for (const [j, effects] of later) this.#serial(j.id, () => this.#effects(j, effects));
    for (const id of this.#o.store.listFlaggedFinal()) this.poke(id);
    this.#schedulePump();
    this.#release();
    this.#sweepNow();
    this.#sweep = setInterval(() => this.#sweepNow(), this.#o.sweepIntervalMs ?? 30_000);
    this.#sweep.unref();
  }

  /** Stop taking new work; abort transfers (they restart on the next start); batch jobs keep running. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#sweep) clearInterval(this.#sweep);
    for (const t of this.#cancelTimers.values()) clearTimeout(t);
    for (const t of this.#expiry.values()) clearTimeout(t);
    if (this.#parkTimer) clearTimeout(this.#parkTimer);
    // Parked jobs and queued stage-outs hold nothing to stop: the next start resumes them.
    this.#parked.clear();
    this.#due.clear();
    this.#outWaiting.clear();
    for (const ac of this.#transfers.values()) ac.abort(new Error('service stopping'));
    await Promise.allSettled([...this.#chains.values()]);
    await this.#o.backend.close();
  }

  /**
   * New jobs are looked at from the next turn of the event loop, not from microtasks
   * queued now: those would run before the submission's 201 is written, so a bulk
   * POST would wait for a first engine step of each of its jobs. They are stored
   * durably already, so nothing is lost if the service dies in between.
   */
  jobsSubmitted(ids: readonly string[]): void {
    for (const id of ids) this.#incoming.push(id);
    this.#schedulePump();
  }

  #schedulePump(): void {
    if (this.#pumpQueued) return;
    this.#pumpQueued = true;
    setImmediate(() => {
      this.#pumpQueued = false;
      this.#pump();
      this.#pumpPokes();
      this.#pumpRelooks();
    });
  }

  /** Looks for poked jobs, at most POKES_IN_FLIGHT jobs at once, each held until its chain is done. */
  #pumpPokes(): void {
    while (this.#pokesInFlight < POKES_IN_FLIGHT && this.#poked.size > 0 && !this.#stopping) {
      const id = this.#poked.shift()!;
      this.#pokedWaiting.delete(id);
      this.#pokesInFlight++;
      void this.#chain(id, () => this.#look(id))
        .then(() => this.#settled(id))
        .finally(() => {
          this.#pokesInFlight--;
          this.#schedulePump();
        });
    }
  }

  /** Resolves once no step of the job is queued or running (transfers and batch jobs excepted). */
  async #settled(id: string): Promise<void> {
    for (let p = this.#chains.get(id); p !== undefined; p = this.#chains.get(id)) await p;
  }

  /**
   * Start first looks at new jobs, at most PICKUP_IN_FLIGHT at once. A look that starts
   * the job's stage-in hands its slot to it, and the stage-in frees it once the job's
   * session directory is checked: that is where a new job's session directory is made
   * (src/sessions/session-dirs.ts), and without the bound a fill of 100,000 jobs started
   * that many stage-ins at once, each holding its record while it waited for its
   * directory (1.1 GB; docs/performance.md, "Memory").
   */
  #pump(): void {
    while (this.#pickupsInFlight < PICKUP_IN_FLIGHT && this.#incoming.size > 0 && !this.#stopping) {
      const id = this.#incoming.shift()!;
      this.#pickupsInFlight++;
      const free = this.#slotFreer(() => this.#pickupsInFlight--);
      this.#lookSlots.set(id, { free, untilChecked: true });
      void this.#chain(id, () => this.#look(id)).finally(() => this.#slotUntaken(id, free));
    }
  }

  /** Frees a look slot once (`release` gives it back), then lets the queues start the next. */
  #slotFreer(release: () => void): () => void {
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      release();
      this.#schedulePump();
    };
  }

  /** After a look: a slot no stage-in took (the look started none) is freed here. */
  #slotUntaken(id: string, free: () => void): void {
    if (this.#lookSlots.get(id)?.free !== free) return;
    this.#lookSlots.delete(id);
    free();
  }

  /** Start due looks at parked jobs, at most RELOOKS_IN_FLIGHT at once (see #due). */
  #pumpRelooks(): void {
    while (this.#relooksInFlight < RELOOKS_IN_FLIGHT && this.#due.size > 0 && !this.#stopping) {
      const id = this.#due.shift()!;
      // Looked at meanwhile (poked, killed, cleaned): its entry is gone or a new, unqueued one.
      if (this.#parked.get(id)?.queued !== true) continue;
      this.#relooksInFlight++;
      const free = this.#slotFreer(() => this.#relooksInFlight--);
      void this.#chain(id, () => {
        if (this.#parked.get(id)?.queued !== true) return;
        this.#lookSlots.set(id, { free, untilChecked: false });
        this.#wake(id);
      }).finally(() => this.#slotUntaken(id, free));
    }
  }

  /** New jobs waiting for their first look (tests). */
  get incoming(): number {
    return this.#incoming.size;
  }

  /** Jobs waiting for client uploads with no look at them under way (tests). */
  get parked(): number {
    return this.#parked.size;
  }

  /** Look at a job again (request flag set, client upload completed), in turn (see #poked). */
  poke(id: string): void {
    if (this.#stopping || this.#pokedWaiting.has(id)) return;
    this.#pokedWaiting.add(id);
    this.#poked.push(id);
    this.#schedulePump();
  }

  /** Poked jobs waiting for their look (tests). */
  get pokesWaiting(): number {
    return this.#poked.size;
  }

  /** Counters for the info document and tests. */
  waiting(step: SlotStep): number {
    return this.#slots.waitingCount(step);
  }

  #serial(id: string, fn: () => Promise<void> | void): void {
    void this.#chain(id, fn);
  }

  /** Runs `fn` after the job's earlier work; the promise settles (never rejects) when it is done. */
  #chain(id: string, fn: () => Promise<void> | void): Promise<void> {
    const prev = this.#chains.get(id) ?? Promise.resolve();
    const p = prev
      .then(fn)
      .catch((e: unknown) => this.#o.log.error({ err: e, job: id }, 'engine step failed'))
      .finally(() => {
        if (this.#chains.get(id) === p) this.#chains.delete(id);
      });
    this.#chains.set(id, p);
    return p;
  }

  /** Decide what a job needs now, from its stored record. */
  async #look(id: string): Promise<void> {
    // A slot granted by #release ends here: used by the pick-up below, or handed on.
    const granted = this.#slots.takeGrant(id);
    const j = this.#o.store.get(id);
    if (!j) return granted ? this.#release() : undefined;
    const m = ms(j);
    const flag = requestedEvent(m);
    if (flag) {
      await this.#apply(id, flag === 'restart-requested' ? { type: flag, inputsComplete: false } : { type: flag });
      return granted ? this.#release() : undefined;
    }
    if (m.state === 'ACCEPTED' && !m.pending) {
      const dry = j.description.dryRun;
      if (dry) {
        await this.#apply(id, { type: 'processing-failed', reason: 'Job has dryrun requested. Job skipped.' });
        return granted ? this.#release() : undefined;
      }
      // engine.maxActiveJobs: past it, new jobs stay unprocessed (REST ACCEPTING) in turn.
      if (!granted && !this.#slots.free('ACCEPT')) return this.#slots.wait('ACCEPT', id, j.owner);
      // Decided and persisted synchronously (no await before the slot count is updated),
      // so concurrent pick-ups never over-admit.
      const hold = !this.#slots.mayEnter('PREPARING', j.owner);
      return this.#apply(id, { type: 'picked-up', hold }, {}, j);
    }
    // An upload may have completed: a parked job is looked at now; one being looked at, once more.
    if (this.#parked.has(id)) this.#wake(id);
    else if (this.#transfers.has(id)) this.#pokedDuringLook.add(id);
    if (granted) this.#release();
  }

  /**
   * Apply one event to the job's current record; persist; run the effects. `known`: the
   * record as the caller just read it, used for the first attempt instead of a second
   * read (if it is stale, the compare-and-set fails and the record is read again).
   */
  async #apply(id: string, event: EngineEvent, extra: JobChanges = {}, known?: JobRecord): Promise<void> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const j = attempt === 0 && known !== undefined ? known : this.#o.store.get(id);
      if (!j) return;
      const first = next(ms(j), event);
      if (!first.ok) {
        this.#o.log.debug({ job: id, event: event.type, reason: first.reason }, 'event refused');
        // Undo a slot pre-counted by #release for a job that did not move.
        this.#slots.set(id, j.owner, isFinal(ms(j)) ? undefined : positionOf(ms(j)));
        return;
      }
      const t = this.#merged(j, first);
      const now = this.#now();
      const moved = t.steps.some((s) => s.from !== s.to);
      const changes = this.#changes(j, t.to, t.effects, moved ? { ...extra, stateEnteredAt: now } : extra);
      const updated = this.#o.store.update(j, changes, now);
      if (!updated) continue; // changed underneath (a REST flag): decide again from the fresh record
      const from = positionOf(ms(j));
      const to = positionOf(t.to);
      this.#slots.set(id, j.owner, isFinal(t.to) ? undefined : to);
      if (from !== to) this.#slots.unwait(id);
      let lines = '';
      const at = new Date(now);
      // The first step leaves the position the record was in since its stored entry time
      // (or, never moved yet, since its submission); each later step leaves one it entered now.
      let enteredAt = j.stateEnteredAt ?? (from === 'ACCEPTED' ? j.createdAt : undefined);
      for (const s of t.steps) {
        if (s.from === s.to) continue;
        // One line per state change, at info: an administrator follows a job by its id.
        this.#o.log.info({ job: id, from: s.from, to: s.to, reason: s.reason }, 'job state change');
        this.#o.onTransition?.({ id, from: s.from, to: s.to, final: s.final, enteredAt });
        enteredAt = now;
        lines += logLine(`Job state change ${s.from} -> ${s.to}   Reason: ${s.reason}`, at);
      }
      if (lines) await this.#o.control.append(id, 'errors', lines).catch(() => undefined);
      if (lines && updated.description.logDir && this.#o.onLogged)
        await this.#o
          .onLogged(updated)
          .catch((e: unknown) => this.#o.log.warn({ err: e, job: id }, "the job's log directory was not written"));
      if (changes.eraseAt !== undefined) this.#scheduleExpiry(id, changes.eraseAt);
      await this.#effects(updated, t.effects);
      // A flag set meanwhile (kill during a step) or a freed slot: look again.
      if (updated.killRequested || updated.cleanRequested || updated.restartRequested) this.poke(id);
      if (stepOf(from) !== stepOf(to) || isFinal(t.to) || t.effects.some((e) => e.type === 'await-slot'))
        this.#release();
      return;
    }
    this.#o.log.warn({ job: id, event: event.type }, 'job kept changing; event dropped, will be looked at again');
    this.poke(id);
  }

  /**
   * A transition followed at once by others, carried out as one: an effect whose end is
   * known the moment it starts (#doneAtOnce: a stage-in or stage-out with nothing to do, a
   * cancel with nothing to stop) is not run; the event that ends it is applied now, and
   * all the steps are persisted in the one compare-and-set. Crash safety holds as for each
   * step alone: nothing was done between them (no file, no process), the state recorded is
   * the last one, and resuming from it is what the later steps would have started. Each
   * step still gets its own line in the log, the `errors` file and the transition
   * observers, in order. A job killed before it was looked at goes from ACCEPTED to
   * FINISHED (killed) in one update instead of three.
   */
  #merged(j: JobRecord, t: Extract<Transition, { ok: true }>): Merged {
    const step = (from: MachineState, to: MachineState, reason: string): MergedStep => ({
      from: positionOf(from),
      to: positionOf(to),
      reason,
      final: isFinal(to),
    });
    const steps = [step(t.from, t.to, t.reason)];
    let to = t.to;
    let effects = t.effects;
    // Each follow-up moves the job on (stage-in → submit, cancel → stage-out → end): a few at most.
    for (let round = 0; round < 4; round++) {
      const done = this.#doneAtOnce(j, effects);
      if (done === undefined) break;
      const t2 = next(to, done.event);
      if (!t2.ok) break;
      steps.push(step(t2.from, t2.to, t2.reason));
      effects = [...effects.filter((_, i) => i !== done.index), ...t2.effects];
      to = t2.to;
    }
    return { to, effects, steps };
  }

  /** The first of `effects` that would end the moment it starts, and the event that ends it. */
  #doneAtOnce(j: JobRecord, effects: readonly Effect[]): { index: number; event: EngineEvent } | undefined {
    for (let i = 0; i < effects.length; i++) {
      const e = effects[i]!;
      if (e.type === 'start-stage-in' && this.#o.staging.nothingToStageIn?.(j) === true)
        return { index: i, event: this.#stageInDone(j) };
      if (e.type === 'confirm-cancel') return { index: i, event: { type: 'cancel-done' } };
      if (e.type === 'start-stage-out' && this.#o.staging.nothingToStageOut?.(j, e.mode) === true)
        return { index: i, event: { type: 'upload-done' } };
    }
    return undefined;
  }

  /** The event that ends a successful stage-in of `j`. */
  #stageInDone(j: JobRecord): EngineEvent {
    return j.description.executable === undefined
      ? { type: 'no-executable' }
      : { type: 'staging-done', hold: !this.#slots.mayEnter('SUBMIT', j.owner) };
  }

  #changes(j: JobRecord, to: MachineState, effects: readonly Effect[], extra: JobChanges): JobChanges {
    const c: JobChanges = { ...persistedFields(to), ...extra };
    const now = this.#now();
    if (to.state === 'INLRMS' && to.lrmsState === 'RUNNING' && j.startedAt === null) c.startedAt = now;
    for (const e of effects) {
      if (e.type === 'record-end') {
        c.endedAt = now;
        const asked = j.description.lifetimeSeconds ?? this.#o.sessionLifetimeSeconds;
        c.eraseAt = now + Math.min(asked, this.#o.maxSessionLifetimeSeconds) * 1000;
      } else if (e.type === 'wipe-session') {
        c.eraseAt = now + this.#o.wipedRetentionSeconds * 1000;
      } else if (e.type === 'prepare-rerun') {
        c.endedAt = null;
        c.eraseAt = null;
        c.startedAt = null;
      }
    }
    return c;
  }

  async #effects(j: JobRecord, effects: readonly Effect[]): Promise<void> {
    for (const e of effects) {
      switch (e.type) {
        case 'start-stage-in':
          this.#transfer(j, 'in');
          break;
        case 'start-stage-out':
          this.#stageOut(j, e.mode);
          break;
        case 'abort-staging': {
          const parked = this.#parked.get(j.id);
          const out = this.#outWaiting.get(j.id);
          if (parked !== undefined) {
            this.#parked.delete(j.id);
            this.#transfer(j, 'in', 'success', parked.since, new Error('cancelled'));
          } else if (out !== undefined) {
            this.#outWaiting.delete(j.id);
            this.#transfer(j, 'out', out, j.updatedAt, new Error('cancelled'));
          } else this.#transfers.get(j.id)?.abort(new Error('cancelled'));
          break;
        }
        case 'submit-batch-job':
          this.#submit(j);
          break;
        case 'cancel-batch-job':
          this.#cancel(j.id, e.localId);
          break;
        case 'confirm-cancel':
          this.#serial(j.id, () => this.#apply(j.id, { type: 'cancel-done' }));
          break;
        case 'recover-batch-job':
          // Only at start-up, where start() hands all of them to the backend at once.
          break;
        case 'await-slot':
          this.#slots.wait(e.step, j.id, j.owner);
          break;
        case 'prepare-rerun':
          await this.#o.control.remove(j.id, 'failed');
          break;
        case 'record-end':
          if (j.failureReason) await this.#o.control.write(j.id, 'failed', `${j.failureReason}\n`);
          await this.#o
            .onEnded?.(j)
            .catch((e: unknown) =>
              this.#o.log.error({ err: e, job: j.id }, 'accounting record not written; written at the next start'),
            );
          break;
        case 'wipe-session':
          await this.#releaseBatchJob(j);
          await this.#removeSession(j, true);
          await this.#o.control.removeAll(j.id, ['errors', 'failed', 'diag', 'statistics']);
          await rm(attemptDir(this.#o.lrmsJobsRoot, j).replace(/\/r\d+$/, ''), { recursive: true, force: true });
          break;
        case 'remove-job':
          await this.#releaseBatchJob(j);
          await this.#remove(j);
          break;
      }
    }
  }

  /**
   * `since`: when the job entered PREPARING (a stage-in looked at again after parking);
   * `aborted`: run it aborted already (a parked wait that is cancelled reports as an
   * aborted one).
   */
  #transfer(
    j: JobRecord,
    dir: 'in' | 'out',
    mode: StageOutMode = 'success',
    since = j.updatedAt,
    aborted?: Error,
  ): void {
    const ac = new AbortController();
    this.#transfers.get(j.id)?.abort(new Error('superseded'));
    this.#parked.delete(j.id);
    this.#outWaiting.delete(j.id);
    this.#transfers.set(j.id, ac);
    if (dir === 'out') this.#outsInFlight++;
    if (aborted !== undefined) ac.abort(aborted);
    const slot = dir === 'in' ? this.#lookSlots.get(j.id) : undefined;
    if (slot !== undefined) this.#lookSlots.delete(j.id);
    const run =
      dir === 'in'
        ? this.#o.staging.stageIn(j, ac.signal, {
            lookOnce: true,
            preparingSince: since,
            ...(slot?.untilChecked === true ? { sessionChecked: slot.free } : {}),
          })
        : this.#o.staging.stageOut(j, mode, ac.signal);
    void run
      .catch((e: unknown) => ({
        ok: false as const,
        reason: `Internal error during data staging: ${e instanceof Error ? e.message : String(e)}`,
      }))
      .then((r) => {
        slot?.free(); // a re-look, or a first look's stage-in that ended before its session check
        if (dir === 'out') {
          this.#outsInFlight--;
          this.#pumpOuts();
        }
        if (this.#stopping && ac.signal.aborted) {
          if (this.#transfers.get(j.id) === ac) this.#transfers.delete(j.id);
          return; // resumed on the next start
        }
        if ('waiting' in r) {
          // Still "under way" until the job's turn: a kill meanwhile aborts it, a poke is noted.
          this.#serial(j.id, () => this.#park(j.id, ac, since, r.checkAt));
          return;
        }
        if (this.#transfers.get(j.id) === ac) this.#transfers.delete(j.id);
        this.#pokedDuringLook.delete(j.id);
        let ev: EngineEvent;
        if (dir === 'in') {
          ev = r.ok ? this.#stageInDone(j) : { type: 'staging-failed', reason: r.reason };
        } else {
          ev = r.ok ? { type: 'upload-done' } : { type: 'upload-failed', reason: r.reason };
        }
        this.#serial(j.id, () => this.#apply(j.id, ev));
      });
  }

  /** Start the job's stage-out, or queue it (as its id) behind STAGE_OUTS_IN_FLIGHT others. */
  #stageOut(j: JobRecord, mode: StageOutMode): void {
    if (this.#outsInFlight < STAGE_OUTS_IN_FLIGHT && this.#outQueue.size === 0) return this.#transfer(j, 'out', mode);
    this.#transfers.get(j.id)?.abort(new Error('superseded'));
    if (!this.#outWaiting.has(j.id)) this.#outQueue.push(j.id);
    this.#outWaiting.set(j.id, mode);
  }

  /** Start queued stage-outs while there is room; each from the job's record as stored now. */
  #pumpOuts(): void {
    while (this.#outsInFlight < STAGE_OUTS_IN_FLIGHT && this.#outQueue.size > 0 && !this.#stopping) {
      const id = this.#outQueue.shift()!;
      const mode = this.#outWaiting.get(id);
      if (mode === undefined) continue; // started aborted (kill) or cleaned meanwhile
      this.#outWaiting.delete(id);
      const j = this.#o.store.get(id);
      if (j) this.#transfer(j, 'out', mode);
    }
  }

  /** Stage-outs waiting for their turn (tests). */
  get stageOutsWaiting(): number {
    return this.#outWaiting.size;
  }

  /** A look found client uploads still missing: hold the job as numbers until the next one. */
  #park(id: string, ac: AbortController, since: number, checkAt: number): void {
    if (this.#transfers.get(id) !== ac) return; // superseded or cleaned meanwhile
    this.#transfers.delete(id);
    const poked = this.#pokedDuringLook.delete(id);
    if (this.#stopping) return;
    const j = this.#o.store.get(id);
    if (!j) return;
    // Cancelled meanwhile (or moved on some other way): report as an aborted wait does.
    if (ac.signal.aborted || positionOf(ms(j)) !== 'PREPARING')
      return this.#transfer(j, 'in', 'success', since, new Error('cancelled'));
    if (poked) return this.#transfer(j, 'in', 'success', since);
    this.#parked.set(id, { since, at: checkAt, queued: false });
    this.#armParkTimer(checkAt);
  }

  /** Look again at a parked job's uploads (in the job's turn). */
  #wake(id: string): void {
    const p = this.#parked.get(id);
    if (p === undefined) return;
    this.#parked.delete(id);
    const j = this.#o.store.get(id);
    if (j) this.#transfer(j, 'in', 'success', p.since);
  }

  #armParkTimer(at: number): void {
    if (this.#stopping || at >= this.#parkTimerAt) return;
    if (this.#parkTimer) clearTimeout(this.#parkTimer);
    this.#parkTimerAt = at;
    // Epoch ms from the stager's clock; a far time is reached in steps (timers take < 2^31 ms).
    this.#parkTimer = setTimeout(() => this.#parkScan(), Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1));
    this.#parkTimer.unref();
  }

  /** Queue the parked jobs that are due for their look (#due); at most one scan of them all per PARK_SCAN_MS. */
  #parkScan(): void {
    this.#parkTimer = undefined;
    this.#parkTimerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [id, p] of this.#parked) {
      if (p.queued) continue;
      if (p.at <= now) {
        p.queued = true;
        this.#due.push(id);
      } else if (p.at < next) next = p.at;
    }
    if (next < Infinity) this.#armParkTimer(Math.max(next, now + PARK_SCAN_MS));
    this.#pumpRelooks();
  }

  #submit(j: JobRecord): void {
    const spec = batchSpec(j, {
      sessionDir: this.#o.sessions.pathOf(j.id),
      lrmsDir: attemptDir(this.#o.lrmsJobsRoot, j),
      rteScripts: this.#o.rteScripts,
      serviceUrl: this.#o.serviceUrl(),
      defaultAccount: this.#o.defaultAccount,
    });
    // The batch job gets a path: it must name the directory the job was given, not a
    // link or a directory an earlier attempt put in its place.
    void this.#o.sessions
      .check(j.id, j.sessionIdent)
      .then(async () => {
        const env = (await this.#o.credentials?.place(j.id, j.delegationId, j.owner, spec.localAccount)) ?? [];
        return this.#o.backend.submit(
          env.length === 0 ? spec : { ...spec, environment: [...spec.environment, ...env] },
        );
      })
      .then(
        (localId) =>
          this.#serial(j.id, () =>
            this.#apply(j.id, {
              type: 'submitted',
              localId,
              ...(this.#o.backend.runsOnSubmit ? { running: true } : {}),
            }),
          ),
        (e: unknown) => {
          if (this.#stopping) return;
          const reason = `Job submission to the batch system failed: ${e instanceof Error ? e.message : String(e)}`;
          this.#serial(j.id, () => this.#apply(j.id, { type: 'submit-failed', reason }));
        },
      );
  }

  #cancel(id: string, localId: string): void {
    void this.#o.backend.cancel(localId).then(
      (running) => {
        if (!running) {
          this.#serial(id, () => this.#apply(id, { type: 'cancel-done' }));
          return;
        }
        // The final update moves the job on; if the batch system never confirms, give up waiting.
        const t = setTimeout(() => {
          this.#cancelTimers.delete(id);
          this.#serial(id, () => this.#apply(id, { type: 'cancel-done' }));
        }, this.#o.cancelTimeoutSeconds * 1000);
        t.unref();
        this.#cancelTimers.set(id, t);
      },
      (e: unknown) => {
        this.#o.log.warn({ err: e, job: id }, 'batch cancel failed');
        this.#serial(id, () => this.#apply(id, { type: 'cancel-done' }));
      },
    );
  }

  #onBatchUpdate(localId: string, u: BatchUpdate): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#serial(u.jobId, async () => {
        try {
          const j = this.#o.store.get(u.jobId);
          if (!j) return;
          // A batch state the job is recorded in already (RUNNING after a submission the
          // backend started at once, runsOnSubmit): nothing to write.
          if (u.kind === 'state' && j.state === 'INLRMS' && j.lrmsState === u.state && j.localId === localId) return;
          const extra: JobChanges = {};
          if (u.kind === 'final') {
            const t = this.#cancelTimers.get(u.jobId);
            if (t) clearTimeout(t);
            this.#cancelTimers.delete(u.jobId);
            const r = u.result;
            extra.engine = {
              ...j.engine,
              usage: {
                wallTimeSeconds: r.wallTimeSeconds,
                cpuTimeSeconds: r.cpuTimeSeconds,
                userTimeSeconds: r.userTimeSeconds,
                kernelTimeSeconds: r.kernelTimeSeconds,
                maxRssBytes: r.maxRssBytes,
                nodes: r.nodes,
                ...(r.startTime ? { startTime: r.startTime.getTime() } : {}),
                ...(r.endTime ? { endTime: r.endTime.getTime() } : {}),
                // Figures only the job vouches for (its wrapper shares its account): the
                // accounting record and the ComputingActivity say so.
                ...(r.jobReported?.length ? { jobReported: [...r.jobReported] } : {}),
              },
            };
            if (r.startTime && j.startedAt === null) extra.startedAt = r.startTime.getTime();
            // The backend's accounting (A-REX diag format) becomes the job's `diag` control file.
            // Read as a job-reachable file: no links, no waiting, bounded (lrms/job-file.ts).
            const diag = await readJobFile(join(attemptDir(this.#o.lrmsJobsRoot, j), 'diag')).catch(() => undefined);
            if (diag) await this.#o.control.write(j.id, 'diag', diag);
            await this.#o.credentials
              ?.remove(j.id)
              .catch((e: unknown) =>
                this.#o.log.warn({ err: e, job: j.id }, "cannot remove the job's credential copy"),
              );
          }
          const ev = batchUpdateEvent(localId, u, {
            expectedExitCode: j.description.expectedExitCode,
            hold: !this.#slots.free('FINISHING'),
          });
          await this.#apply(u.jobId, ev, extra, j);
        } finally {
          resolve();
        }
      });
    });
  }

  /**
   * Clean: files first, the record last. A crash in between leaves a FINISHED record with
   * its clean flag set, which the next start cleans again (removal is idempotent).
   */
  async #remove(j: JobRecord): Promise<void> {
    this.#transfers.get(j.id)?.abort(new Error('cleaned'));
    this.#parked.delete(j.id);
    this.#outWaiting.delete(j.id);
    const t = this.#expiry.get(j.id);
    if (t) clearTimeout(t);
    this.#expiry.delete(j.id);
    this.#slots.set(j.id, j.owner, undefined);
    this.#slots.unwait(j.id);
    // The four removals touch different folders, so they run side by side: one after the
    // other, a clean was ~40 file operations in a row, each waiting for a turn of an event
    // loop that under load takes ~100 ms (4-6 s per clean; the engine fell behind the
    // cleans asked for and the store grew, docs/performance.md "Soak memory"). A wiped
    // job's directory went at the wipe (with anything the job had renamed it to): its
    // final clean does not search the whole sessions folder again.
    await Promise.all([
      this.#removeSession(j, j.state !== 'DELETED'),
      this.#o.control.removeAll(j.id),
      this.#o.credentials?.remove(j.id).catch(() => undefined),
      rm(attemptDir(this.#o.lrmsJobsRoot, j).replace(/\/r\d+$/, ''), { recursive: true, force: true }),
    ]);
    const fresh = this.#o.store.get(j.id);
    if (fresh) this.#o.store.delete(fresh);
  }

  /**
   * The session directory goes, and what the job made of it: a link in its place is
   * removed, never followed; the job's own directory is found by its identity even if
   * the job renamed it. A failure is logged and does not keep the job's record (the
   * removal cannot become possible later by waiting).
   */
  async #removeSession(j: JobRecord, findRenamed: boolean): Promise<void> {
    try {
      const r = await this.#o.sessions.remove(j.id, j.sessionIdent, { findRenamed });
      if (r.found === 'link' || r.found === 'other' || r.keptForeign || r.leftovers.length > 0) {
        this.#o.log.warn(
          { job: j.id, found: r.found, leftovers: r.leftovers, keptForeign: r.keptForeign },
          'session directory had been replaced by the job; removed without following it',
        );
      }
    } catch (e) {
      this.#o.log.warn({ err: e, job: j.id }, 'session directory not fully removed');
    }
  }

  /** Before a job's files go: the backend kills anything of it still running (a daemon that outlived it). */
  async #releaseBatchJob(j: JobRecord): Promise<void> {
    if (j.localId === null || !this.#o.backend.release) return;
    await this.#o.backend
      .release({ jobId: j.id, lrmsDir: attemptDir(this.#o.lrmsJobsRoot, j) })
      .catch((e: unknown) => this.#o.log.warn({ err: e, job: j.id }, 'batch release failed'));
  }

  /** Wake up exactly when a job's session lifetime (or wiped-record retention) ends. */
  #scheduleExpiry(id: string, at: number | null): void {
    const old = this.#expiry.get(id);
    if (old) clearTimeout(old);
    this.#expiry.delete(id);
    if (at === null || this.#stopping) return;
    const delay = at - this.#now();
    if (delay > 24 * 3600 * 1000) return; // far away: the periodic sweep will find it
    const t = setTimeout(
      () => {
        this.#expiry.delete(id);
        this.#sweepNow();
      },
      Math.max(0, delay) + 5,
    );
    t.unref();
    this.#expiry.set(id, t);
  }

  /** Give freed slots to waiting jobs, owners in turn. */
  #release(): void {
    if (this.#releasing || this.#stopping) return;
    this.#releasing = true;
    try {
      for (;;) {
        // Granted (counted) at once; picked up by #look in the job's turn.
        const id = this.#slots.takeNext('ACCEPT');
        if (id === undefined) break;
        this.#serial(id, () => this.#look(id));
      }
      for (const step of ['PREPARING', 'SUBMIT', 'FINISHING'] as const) {
        for (;;) {
          const id = this.#slots.takeNext(step);
          if (id === undefined) break;
          // Count it in its new step at once so the next takeNext sees the slot as used.
          const j = this.#o.store.get(id);
          if (!j) continue;
          this.#slots.set(id, j.owner, step === 'SUBMIT' ? 'SUBMIT' : step);
          this.#serial(id, () => this.#apply(id, { type: 'limit-release' }));
        }
      }
    } finally {
      this.#releasing = false;
    }
  }

  /** Session lifetimes: wipe expired finished jobs; purge old wiped records. */
  #sweepNow(): void {
    if (this.#stopping) return;
    for (const j of this.#o.store.listExpired(this.#now())) {
      if (j.state === 'FINISHED') this.#serial(j.id, () => this.#apply(j.id, { type: 'lifetime-expired' }));
      else if (j.state === 'DELETED') this.#serial(j.id, () => this.#remove(j));
    }
  }
}

/** The machine's view of a stored job (validated: a corrupt record is an error, not a guess). */
export function ms(j: JobRecord): MachineState {
  return machineStateOf(j);
}

/** First looks at new jobs running at once (see Scheduler.#incoming). */
const PICKUP_IN_FLIGHT = 64;

/** Poked jobs worked on at once (see Scheduler.#poked). */
const POKES_IN_FLIGHT = 64;

/** Stage-outs running at once (see Scheduler.#outQueue); above the stager's default job slots (10). */
const STAGE_OUTS_IN_FLIGHT = 64;

/** Due looks at parked jobs running at once (see Scheduler.#due). */
const RELOOKS_IN_FLIGHT = 64;

/** A job waiting for client uploads between two looks (see Scheduler.#parked); epoch ms. */
interface Parked {
  readonly since: number;
  readonly at: number;
  /** Due, and waiting in Scheduler.#due for its look. */
  queued: boolean;
}

/** Parked jobs are due at times spread over the poll interval: one scan of them per second at most. */
const PARK_SCAN_MS = 1000;

function stepOf(p: Position): SlotStep | undefined {
  return p === 'PREPARING'
    ? 'PREPARING'
    : p === 'SUBMIT' || p === 'INLRMS'
      ? 'SUBMIT'
      : p === 'FINISHING'
        ? 'FINISHING'
        : undefined;
}
