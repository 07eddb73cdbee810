/**
 * The per-job quota on bytes uploaded into a session directory.
 *
 * What counts: for every file written through the REST interface, its extent — the
 * size of a file put whole, the end of the furthest range for a ranged PUT (so a
 * sparse write at a large offset counts its full length: the job sees, reads and
 * may stage out a file that long). A job's usage is the sum over its files plus the
 * projected growth of uploads in flight; a write that would take it over the quota
 * is refused with 413 before its body is read when its length is known, and as soon
 * as its body passes the quota otherwise. Replacing a file counts its new size only.
 *
 * Kept in memory, like the range tracker: a restart starts every job from zero. A
 * file deleted through the API stops counting; files the job itself writes or
 * removes do not change the ledger. Jobs that no longer exist (cleaned) are dropped by a
 * sweep whenever the ledger has doubled since the last one. The sweep asks by job id:
 * writes reach the session through a leased descriptor path, which names another
 * directory (or nothing) once the lease has ended, so a path says nothing about the job.
 */
import { ceError } from '../errors/ce-error.js';

interface JobLedger {
  /** Extent of every file written through the API. */
  readonly files: Map<string, number>;
  /** Sum of `files`. */
  committed: number;
  /** Growth projected by uploads in flight. */
  inflight: number;
}

/** One write in progress. Exactly one of `commit` or `release` ends it. */
export interface QuotaReservation {
  /** The write will make the file at least `extent` bytes long; 413 over the quota. */
  grow(extent: number): void;
  /** The write is over and the file is now `extent` bytes long. */
  commit(extent: number): void;
  /** The write changed nothing (an upload to a temporary file that was dropped). */
  release(): void;
}

const MIN_SWEEP_AT = 1024;

export class UploadQuota {
  readonly #jobs = new Map<string, JobLedger>();
  #sweepAt = MIN_SWEEP_AT;

  /** `jobExists`: whether a job still exists (its ledger is dropped by the next sweep once not). */
  constructor(
    readonly maxBytesPerJob: number,
    readonly jobExists: (jobId: string) => boolean,
  ) {}

  /** Jobs with a ledger (tests, metrics). */
  get size(): number {
    return this.#jobs.size;
  }

  /** Bytes the job's uploaded files take, uploads in flight included. */
  usage(jobId: string): number {
    const j = this.#jobs.get(jobId);
    return j === undefined ? 0 : j.committed + j.inflight;
  }

  /** Starts a write that makes `path` at least `extent` bytes long; 413 over the quota. */
  begin(jobId: string, path: string, extent: number): QuotaReservation {
    const j = this.#ledger(jobId);
    const base = j.files.get(path) ?? 0;
    let growth = 0;
    let open = true;
    const grow = (e: number): void => {
      const g = Math.max(0, e - base);
      if (g <= growth) return;
      const total = j.committed + j.inflight - growth + g;
      if (total > this.maxBytesPerJob) {
        throw ceError(
          'CE_ERR_SESSION_JOB_QUOTA',
          `Upload quota of the job exceeded: its uploaded files would take ${total} bytes, more than its quota of ${this.maxBytesPerJob} bytes`,
        );
      }
      j.inflight += g - growth;
      growth = g;
    };
    const end = (): boolean => {
      if (!open) return false;
      open = false;
      j.inflight -= growth;
      return true;
    };
    grow(extent);
    return {
      grow: (e) => {
        if (open) grow(e);
      },
      commit: (e) => {
        if (!end()) return;
        j.committed += e - (j.files.get(path) ?? 0);
        j.files.set(path, e);
      },
      release: () => void end(),
    };
  }

  /** A file (or with `below`, everything under it as a directory) was deleted through the API. */
  forget(jobId: string, path: string, below: boolean): void {
    const j = this.#jobs.get(jobId);
    if (!j) return;
    const prefix = path === '' ? '' : `${path}/`;
    for (const [p, e] of j.files) {
      if (p === path || (below && p.startsWith(prefix))) {
        j.files.delete(p);
        j.committed -= e;
      }
    }
  }

  #ledger(jobId: string): JobLedger {
    let j = this.#jobs.get(jobId);
    if (!j) {
      j = { files: new Map(), committed: 0, inflight: 0 };
      this.#jobs.set(jobId, j);
      if (this.#jobs.size >= this.#sweepAt) this.sweep();
    }
    return j;
  }

  /** Drops the ledgers of jobs that no longer exist (nothing in flight for them). */
  sweep(): void {
    for (const [id, j] of this.#jobs) {
      if (j.inflight === 0 && !this.jobExists(id)) this.#jobs.delete(id);
    }
    this.#sweepAt = Math.max(MIN_SWEEP_AT, 2 * this.#jobs.size);
  }
}
