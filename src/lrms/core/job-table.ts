/**
 * The table of the jobs a polling batch backend (Slurm, Grid Engine) tracks, and what it
 * does with them whatever the batch system: a submission of one attempt at a time (a
 * second submit of the same lrms directory joins the first), recovery, the answer to a
 * cancel, state reports that say changes only, one look at a job's end at a time, and the
 * one final update (the cancel rule applied, the diag file written). The backend adds its
 * own fields to each job (`X`: Slurm's scancel bookkeeping, Grid Engine's error reason)
 * and keeps only what its batch system needs.
 *
 * Invariants: a job is in the table from its submit's answer (or its recovery) until its
 * final update is being delivered; `ended` is set once, by `finish`, and nothing is
 * reported after it; updates go through the per-job chain (./update-chain.ts).
 */
import { ceError } from '../../errors/ce-error.js';
import type {
  BatchJobRef,
  BatchJobSpec,
  BatchResult,
  BatchState,
  BatchUpdate,
  BatchUpdateListener,
} from '../backend.js';
import type { BackendLog } from './backend-log.js';
import { afterCancel } from './cancel-result.js';
import { writeDiag } from './diag-file.js';
import { validateSpec } from './job-script.js';
import { chainStart, queueUpdate, type UpdateTarget } from './update-chain.js';

/** What every tracked job has; a backend's own fields come beside (`Tracked<X>`). */
export interface TrackedJob {
  readonly localId: string;
  readonly jobId: string;
  readonly lrmsDir: string;
  /** When this instance began to track it: a poll begun earlier may not list it yet (0: recovered, known since always). */
  readonly knownSince: number;
  /** When a cancel was asked for (0: never). */
  cancelledAt: number;
  /**
   * What was last reported, to report changes only: kept as its parts and compared part by
   * part, so that a poll of 20,000 unchanged jobs builds no string per job.
   */
  reportedState: BatchState | undefined;
  reportedNative: string;
  reportedReason: string;
  /** A look for the job's end is under way: one at a time. */
  checking: boolean;
  ended: boolean;
  chain: Promise<void>;
}

export type Tracked<X extends object> = TrackedJob & X;

export interface JobTableOptions<X extends object> {
  /** Names the backend in log lines. */
  readonly name: string;
  /** The backend's own fields of a job it begins to track. */
  extra(): X;
  /** A job was added: the poll must run. */
  watch(): void;
  log(): BackendLog | undefined;
}

export class JobTable<X extends object> {
  readonly jobs = new Map<string, Tracked<X>>();
  /** Submissions under way per lrms directory: a concurrent submit of the same attempt joins it. */
  readonly #submitting = new Map<string, Promise<string>>();
  #listener: BatchUpdateListener | undefined;
  #closed = false;
  readonly #updates: UpdateTarget<Tracked<X>>;

  constructor(private readonly o: JobTableOptions<X>) {
    this.#updates = {
      name: o.name,
      jobs: this.jobs,
      listener: () => this.#listener,
      closed: () => this.#closed,
      log: () => o.log(),
    };
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#listener = listener;
  }

  /**
   * Submit an attempt once (`run`): refused when closed or when the spec is bad (the core's
   * checks, then `check`, the batch system's own); a submit of an lrms directory under way
   * joins it.
   */
  submit(spec: BatchJobSpec, run: () => Promise<string>, check?: (spec: BatchJobSpec) => void): Promise<string> {
    if (this.#closed) return Promise.reject(ceError('CE_ERR_LRMS_CLOSED'));
    try {
      validateSpec(spec);
      check?.(spec);
    } catch (e) {
      return Promise.reject(e);
    }
    const under = this.#submitting.get(spec.lrmsDir);
    if (under) return under;
    const p = run().finally(() => this.#submitting.delete(spec.lrmsDir));
    this.#submitting.set(spec.lrmsDir, p);
    return p;
  }

  /** The job the batch system took (`localId`) tracked from now, reported as queued under `native`. */
  submitted(spec: BatchJobSpec, localId: string, native: string): void {
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
    if (this.jobs.has(localId)) return;
    this.report(this.track(spec, localId), 'QUEUING', native);
  }

  /** Jobs of an earlier instance, known since always: the next poll says where each is. */
  recover(refs: readonly BatchJobRef[]): void {
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
    for (const ref of refs) if (!this.jobs.has(ref.localId)) this.track(ref, ref.localId, 0);
  }

  track(ref: { jobId: string; lrmsDir: string }, localId: string, knownSince = Date.now()): Tracked<X> {
    const job: Tracked<X> = {
      ...this.o.extra(),
      localId,
      jobId: ref.jobId,
      lrmsDir: ref.lrmsDir,
      knownSince,
      cancelledAt: 0,
      reportedState: undefined,
      reportedNative: '',
      reportedReason: '',
      checking: false,
      ended: false,
      // Nothing is delivered before the caller has seen submit() resolve.
      chain: chainStart(),
    };
    this.jobs.set(localId, job);
    this.o.watch();
    return job;
  }

  /**
   * A cancel: false for a job this instance does not track (or once closed), true for one
   * that ended; else its time is kept (the cancel rule) and `send` asks the batch system.
   */
  async cancel(localId: string, send: (job: Tracked<X>) => Promise<void>): Promise<boolean> {
    const job = this.jobs.get(localId);
    if (!job || this.#closed) return false;
    if (job.ended) return true;
    job.cancelledAt = Date.now();
    await send(job);
    return true;
  }

  /**
   * Report a state, once per change. `reason`: the batch system's own word why the job is
   * not running yet (Slurm's Reason), read in the same poll; a change of it alone is
   * reported too.
   */
  report(job: Tracked<X>, state: BatchState, native: string, reason?: string): void {
    if (job.ended) return;
    if (job.reportedState === state && job.reportedNative === native && job.reportedReason === (reason ?? '')) return;
    job.reportedState = state;
    job.reportedNative = native;
    job.reportedReason = reason ?? '';
    queueUpdate(this.#updates, job, {
      kind: 'state',
      jobId: job.jobId,
      state,
      native,
      ...(reason !== undefined ? { reason } : {}),
    });
  }

  /** The jobs whose end is not known yet. */
  open(): Tracked<X>[] {
    return [...this.jobs.values()].filter((j) => !j.ended);
  }

  /**
   * The same without a copy of the table, for a poll's pass over every job: what `visit`
   * does to the table (a final update's removal comes later, through the update chain) does
   * not disturb the walk.
   */
  forEachOpen(visit: (job: Tracked<X>) => void): void {
    for (const job of this.jobs.values()) if (!job.ended) visit(job);
  }

  /** Run `look` (a look for the job's end) unless one runs or the job ended; a failure is logged and the next poll looks again. */
  async check(job: Tracked<X>, look: () => Promise<void>): Promise<void> {
    if (job.checking || job.ended) return;
    job.checking = true;
    try {
      await look();
    } catch (e) {
      this.o
        .log()
        ?.warn(
          { err: e, localId: job.localId, job: job.jobId },
          `${this.o.name}: cannot find the result of a job; tried again at the next poll`,
        );
    } finally {
      job.checking = false;
    }
  }

  /** The job's one final update: the cancel rule applied, the diag file written first. */
  async finish(job: Tracked<X>, result: BatchResult): Promise<void> {
    if (job.ended) return;
    job.ended = true;
    result = afterCancel(result, job.cancelledAt);
    await writeDiag(job.lrmsDir, result).catch((e: unknown) =>
      this.o.log()?.warn({ err: e, job: job.jobId }, `${this.o.name}: cannot write the diag file`),
    );
    queueUpdate(this.#updates, job, { kind: 'final', jobId: job.jobId, result } satisfies BatchUpdate);
  }
}
