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
import { join } from 'node:path';
import type { BatchJobRef, BatchUpdate } from '../../lrms/backend.js';
import { readJobFile } from '../../lrms/job-file.js';
import type { JobChanges, JobRecord } from '../../store/job-record.js';
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
import { CeError } from '../../errors/ce-error.js';
import { Slots } from './slots.js';
import { ShareChooser, jobClassOf } from './share-chooser.js';
import { attemptDir, batchSpec } from './batch-spec.js';
import { BoundedQueue } from './id-queue.js';
import { UploadParking } from './upload-parking.js';
import { Expiry } from './expiry.js';
import { releaseBatchJob, removeJob, wipeJob } from './job-removal.js';
import type { SchedulerOptions } from './scheduler-options.js';

export type { JobCredentialsPort, SchedulerLog, SchedulerOptions } from './scheduler-options.js';

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

export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #now: () => number;
  readonly #slots: Slots;
  /** Per-job chains serialising all work on one job. */
  readonly #chains = new Map<string, Promise<void>>();
  /** In-flight transfers, abortable (kill, shutdown). */
  readonly #transfers = new Map<string, AbortController>();
  readonly #cancelTimers = new Map<string, NodeJS.Timeout>();
  /**
   * Submissions under way, by job: a kill that comes meanwhile fires the signal, and the
   * backend withdraws a submission whose command has not started (the job ends KILLED and
   * is never submitted); one already under way is cancelled once it is answered.
   */
  readonly #submissions = new Map<string, AbortController>();
  readonly #expiry: Expiry;
  /** Jobs in PREPARING waiting for client uploads between two looks, and their due looks (upload-parking.ts). */
  readonly #parking: UploadParking;
  /** Jobs poked while a look at their uploads was under way: looked at again instead of parked. */
  readonly #pokedDuringLook = new Set<string>();
  /**
   * New jobs not yet looked at, in order (ids only), at most PICKUP_IN_FLIGHT first looks
   * at once. A bulk POST of 1,000 jobs used to start 1,000 chains at once, each holding
   * its record and closures while it waited for the disk; during a flood those piled up
   * to ~7 KB per submitted job (docs/performance.md, "Memory"). Nothing is lost by a
   * crash: the jobs are stored, and start() looks at every unprocessed one again.
   */
  readonly #incoming: BoundedQueue;
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
  readonly #poked: BoundedQueue;
  /**
   * Stage-outs waiting to start, in order, with their modes. At most STAGE_OUTS_IN_FLIGHT
   * run (the stager's own job slots order them further). A flood of killed jobs used to
   * start every stage-out at once, each a suspended chain of calls holding its record
   * while it waited for a slot or a session check: 18,000 of them were ~170 MiB of heap
   * with 20,000 jobs killed (docs/performance.md, "Memory"). A kill of a waiting
   * stage-out runs it aborted at once, so it reports as an aborted one did.
   */
  readonly #outs: BoundedQueue<StageOutMode>;
  #stopping = false;
  #releasing = false;

  constructor(o: SchedulerOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.#slots = new Slots(
      o.limits,
      o.shares === undefined ? undefined : new ShareChooser(o.shares, (id) => jobClassOf(o.store.get(id))),
      // Twice the backend's own bound: the next jobs' files are made ready while the
      // commands run, and no deeper queue forms behind the share decision (slots.ts).
      o.backend.submitConcurrency === undefined ? 0 : 2 * o.backend.submitConcurrency,
    );
    this.#expiry = new Expiry({ now: this.#now, sweep: () => this.#sweepNow() });
    const pumpLater = (): void => this.#schedulePump();
    this.#parking = new UploadParking({
      limit: RELOOKS_IN_FLIGHT,
      scanMs: o.parkScanMs ?? PARK_SCAN_MS,
      look: (id, done) => this.#relook(id, done),
      freed: pumpLater,
    });
    this.#incoming = new BoundedQueue({
      limit: PICKUP_IN_FLIGHT,
      run: (id, _v, done) => this.#pickUp(id, done),
      freed: pumpLater,
    });
    this.#poked = new BoundedQueue({
      limit: POKES_IN_FLIGHT,
      // Held until the job's chain of steps is done, not only the look.
      run: (id, _v, done) =>
        void this.#chain(id, () => this.#look(id))
          .then(() => this.#settled(id))
          .finally(done),
      freed: pumpLater,
    });
    this.#outs = new BoundedQueue<StageOutMode>({
      limit: STAGE_OUTS_IN_FLIGHT,
      run: (id, mode, done) => {
        // From the job's record as stored now.
        const j = this.#o.store.get(id);
        if (j) this.#transfer(j, 'out', mode, j.updatedAt, undefined, done);
        else done();
      },
      freed: () => this.#outs.pump(),
    });
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
    for (const j of active) this.#slots.set(j.id, j.owner, positionOf(ms(j)), j);
    const refs: BatchJobRef[] = [];
    const later: [JobRecord, Effect[]][] = [];
    // Kills asked while the service was down are looked at once the backend has taken
    // its jobs back: a cancel that reached it first found no job to stop, was answered
    // "not running", and the job ended while its processes ran on.
    const kills: string[] = [];
    for (const j of active) {
      const m = ms(j);
      if (m.state === 'ACCEPTED' && !m.pending) this.#incoming.push(j.id, true);
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
        // In turn with the due looks, as ids: a restart with 100,000 jobs in PREPARING
        // does not start 100,000 stage-ins at once.
        this.#parking.due(j.id, j.updatedAt);
      } else if (effects.length) later.push([j, effects]);
      if (j.killRequested) kills.push(j.id);
    }
    await this.#o.backend.recover(refs);
    for (const id of kills) this.poke(id);
    for (const [j, effects] of later) this.#serial(j.id, () => this.#effects(j, effects));
    for (const id of this.#o.store.listFlaggedFinal()) this.poke(id);
    this.#schedulePump();
    this.#release();
    this.#expiry.start(this.#o.sweepIntervalMs ?? 30_000);
  }

  /** Stop taking new work; abort transfers (they restart on the next start); batch jobs keep running. */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const q of [this.#incoming, this.#poked, this.#outs]) q.close();
    this.#expiry.stop();
    for (const t of this.#cancelTimers.values()) clearTimeout(t);
    // Parked jobs and queued stage-outs hold nothing to stop: the next start resumes them.
    this.#parking.stop();
    this.#outs.clear();
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
    for (const id of ids) this.#incoming.push(id, true);
    this.#schedulePump();
  }

  #schedulePump(): void {
    if (this.#pumpQueued) return;
    this.#pumpQueued = true;
    setImmediate(() => {
      this.#pumpQueued = false;
      this.#incoming.pump();
      this.#poked.pump();
      this.#parking.pump();
    });
  }

  /** Resolves once no step of the job is queued or running (transfers and batch jobs excepted). */
  async #settled(id: string): Promise<void> {
    for (let p = this.#chains.get(id); p !== undefined; p = this.#chains.get(id)) await p;
  }

  /**
   * A first look at a new job (in turn, #incoming). A look that starts the job's stage-in
   * hands its turn to it, and the stage-in frees it once the job's session directory is
   * checked: that is where a new job's session directory is made
   * (src/sessions/session-dirs.ts), and without the bound a fill of 100,000 jobs started
   * that many stage-ins at once, each holding its record while it waited for its
   * directory (1.1 GB; docs/performance.md, "Memory").
   */
  #pickUp(id: string, done: () => void): void {
    this.#lookSlots.set(id, { free: done, untilChecked: true });
    void this.#chain(id, () => this.#look(id)).finally(() => this.#slotUntaken(id, done));
  }

  /** A due look at a parked job (in turn, upload-parking.ts); its turn is held until the look ends. */
  #relook(id: string, done: () => void): void {
    void this.#chain(id, () => {
      // Looked at meanwhile (poked, killed, cleaned): nothing to do in this turn.
      if (!this.#parking.isDue(id)) return;
      this.#lookSlots.set(id, { free: done, untilChecked: false });
      this.#wake(id);
    }).finally(() => this.#slotUntaken(id, done));
  }

  /** After a look: a turn no stage-in took (the look started none) is freed here. */
  #slotUntaken(id: string, free: () => void): void {
    if (this.#lookSlots.get(id)?.free !== free) return;
    this.#lookSlots.delete(id);
    free();
  }

  /** New jobs waiting for their first look (tests). */
  get incoming(): number {
    return this.#incoming.waiting;
  }

  /** Jobs waiting for client uploads with no look at them under way (tests). */
  get parked(): number {
    return this.#parking.size;
  }

  /** Look at a job again (request flag set, client upload completed), in turn (see #poked). */
  poke(id: string): void {
    if (this.#stopping) return;
    if (this.#poked.push(id, true)) this.#schedulePump();
  }

  /** Poked jobs waiting for their look (tests). */
  get pokesWaiting(): number {
    return this.#poked.waiting;
  }

  /** Counters for the info document and tests. */
  waiting(step: SlotStep): number {
    return this.#slots.waitingCount(step);
  }

  /**
   * The engine's own counters that say why a job waits (src/jobs/wait-reason.ts
   * WaitCounts), each a field or map read: nothing is counted per job or per request.
   */
  waitCounts(): {
    readonly inBatch: number;
    inBatchOf(owner: string): number;
    inBatchOfRoute(route: string, vo?: string): number | undefined;
    readonly preparing: number;
    activeOf(owner: string): number;
    waitsForUploads(id: string): boolean;
    readonly submitting: { readonly n: number; readonly limit: number };
  } {
    const slots = this.#slots;
    const chooser = slots.chooser;
    return {
      inBatch: slots.inStepCount('SUBMIT'),
      inBatchOf: (owner) => slots.runningOf(owner),
      inBatchOfRoute: (route, vo) => chooser?.runningOf(route, vo),
      preparing: slots.inStepCount('PREPARING'),
      activeOf: (owner) => slots.activeOf(owner),
      waitsForUploads: (id) => this.#parking.has(id),
      submitting: slots.submitting,
    };
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
    // A kill while the job is being submitted: the submission is withdrawn if it can still be.
    if (m.state === 'SUBMIT' && !m.pending && j.killRequested)
      this.#submissions.get(id)?.abort(new Error('the job was killed'));
    // An upload may have completed: a parked job is looked at now; one being looked at, once more.
    if (this.#parking.has(id)) this.#wake(id);
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
        this.#slots.set(id, j.owner, isFinal(ms(j)) ? undefined : positionOf(ms(j)), j);
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
      this.#slots.set(id, j.owner, isFinal(t.to) ? undefined : to, j);
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
      if (changes.eraseAt !== undefined) this.#expiry.schedule(id, changes.eraseAt);
      await this.#effects(updated, t.effects);
      // A flag set meanwhile (kill during a step) or a freed slot: look again.
      if (updated.killRequested || updated.cleanRequested || updated.restartRequested) this.poke(id);
      // A job whose submission was answered (SUBMIT -> INLRMS) frees a submission's place.
      if (
        stepOf(from) !== stepOf(to) ||
        (from === 'SUBMIT' && to !== 'SUBMIT') ||
        isFinal(t.to) ||
        t.effects.some((e) => e.type === 'await-slot')
      )
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
      : { type: 'staging-done', hold: !this.#slots.mayEnter('SUBMIT', j.owner, j.id, j) };
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
          const parked = this.#parking.take(j.id);
          const out = parked === undefined ? this.#outs.drop(j.id) : undefined;
          if (parked !== undefined) this.#transfer(j, 'in', 'success', parked.since, new Error('cancelled'));
          // Out of turn: an aborted stage-out ends at once, it must not wait behind running ones.
          else if (out !== undefined) this.#transfer(j, 'out', out, j.updatedAt, new Error('cancelled'));
          else this.#transfers.get(j.id)?.abort(new Error('cancelled'));
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
          this.#slots.wait(e.step, j.id, j.owner, j);
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
          await wipeJob(this.#o, j);
          break;
        case 'remove-job':
          await releaseBatchJob(this.#o, j);
          await this.#remove(j);
          break;
      }
    }
  }

  /**
   * `since`: when the job entered PREPARING (a stage-in looked at again after parking);
   * `aborted`: run it aborted already (a parked wait that is cancelled reports as an
   * aborted one). A stage-out holds a turn of #outs until it ends: `outTurn` when it
   * was given one, else one counted now (out of turn).
   */
  #transfer(
    j: JobRecord,
    dir: 'in' | 'out',
    mode: StageOutMode = 'success',
    since = j.updatedAt,
    aborted?: Error,
    outTurn?: () => void,
  ): void {
    const ac = new AbortController();
    this.#transfers.get(j.id)?.abort(new Error('superseded'));
    this.#parking.take(j.id);
    this.#outs.drop(j.id);
    this.#transfers.set(j.id, ac);
    const outDone = dir === 'out' ? (outTurn ?? this.#outs.enter()) : undefined;
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
        outDone?.();
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
    if (this.#outs.idle) return this.#transfer(j, 'out', mode);
    this.#transfers.get(j.id)?.abort(new Error('superseded'));
    this.#outs.push(j.id, mode);
  }

  /** Stage-outs waiting for their turn (tests). */
  get stageOutsWaiting(): number {
    return this.#outs.waiting;
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
    this.#parking.park(id, since, checkAt);
  }

  /** Look again at a parked job's uploads (in the job's turn). */
  #wake(id: string): void {
    const p = this.#parking.take(id);
    if (p === undefined) return;
    const j = this.#o.store.get(id);
    if (j) this.#transfer(j, 'in', 'success', p.since);
  }

  #submit(j: JobRecord): void {
    const spec = batchSpec(j, {
      sessionDir: this.#o.sessions.pathOf(j.id),
      lrmsDir: attemptDir(this.#o.lrmsJobsRoot, j),
      rteScripts: this.#o.rteScripts,
      serviceUrl: this.#o.serviceUrl(),
      defaultAccount: this.#o.defaultAccount,
    });
    const ac = new AbortController();
    this.#submissions.get(j.id)?.abort(new Error('superseded'));
    this.#submissions.set(j.id, ac);
    // Killed already (a held job handed over as its kill came, a kill asked before a
    // restart): the backend submits only what an earlier life may have started.
    if (j.killRequested) ac.abort(new Error('the job was killed'));
    // The batch job gets a path: it must name the directory the job was given, not a
    // link or a directory an earlier attempt put in its place.
    void this.#o.sessions
      .check(j.id, j.sessionIdent)
      .then(async () => {
        const env = (await this.#o.credentials?.place(j.id, j.delegationId, j.owner, spec.localAccount)) ?? [];
        return this.#o.backend.submit(
          env.length === 0 ? spec : { ...spec, environment: [...spec.environment, ...env] },
          {
            signal: ac.signal,
          },
        );
      })
      .finally(() => {
        if (this.#submissions.get(j.id) === ac) this.#submissions.delete(j.id);
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
          if (e instanceof CeError && e.code === 'CE_ERR_LRMS_SUBMIT_WITHDRAWN') {
            this.#serial(j.id, () => this.#apply(j.id, { type: 'submit-withdrawn' }));
            return;
          }
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
          // The batch system's reason, stored only when it changes (the backend reports changes only).
          const reason = u.kind === 'state' ? (u.reason ?? null) : null;
          const extra: JobChanges = reason !== j.batchReason ? { batchReason: reason } : {};
          // A batch state the job is recorded in already (RUNNING after a submission the
          // backend started at once, runsOnSubmit): nothing to write but a new reason, which
          // is no transition (the state stays).
          if (u.kind === 'state' && j.state === 'INLRMS' && j.lrmsState === u.state && j.localId === localId) {
            // A compare-and-set lost to a request (a kill flag): once more on the fresh record.
            if (extra.batchReason !== undefined && !this.#o.store.update(j, extra, this.#now())) {
              const fresh = this.#o.store.get(u.jobId);
              if (fresh !== undefined && fresh.batchReason !== reason) this.#o.store.update(fresh, extra, this.#now());
            }
            return;
          }
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

  /** Clean: the job leaves every queue and timer, then its files go, its record last (job-removal.ts). */
  async #remove(j: JobRecord): Promise<void> {
    this.#transfers.get(j.id)?.abort(new Error('cleaned'));
    this.#parking.take(j.id);
    this.#outs.drop(j.id);
    this.#expiry.forget(j.id);
    this.#slots.set(j.id, j.owner, undefined);
    this.#slots.unwait(j.id);
    await removeJob(this.#o, j);
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
          this.#slots.set(id, j.owner, step === 'SUBMIT' ? 'SUBMIT' : step, j);
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

/** Stage-outs running at once (see Scheduler.#outs); above the stager's default job slots (10). */
const STAGE_OUTS_IN_FLIGHT = 64;

/** Due looks at parked jobs running at once (upload-parking.ts). */
const RELOOKS_IN_FLIGHT = 64;

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
