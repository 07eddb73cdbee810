/**
 * What the scheduler needs from data staging (src/staging, wired in src/service).
 * Both calls resolve (never reject) with a readable reason on failure; an aborted
 * transfer resolves `{ ok: false, aborted: true }`.
 */
import type { JobRecord } from '../../store/job-record.js';
import type { StageOutMode } from '../state-machine.js';

export type StageOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly aborted?: boolean }
  /** `lookOnce`: client uploads still arriving; stage in again when poked, or at `checkAt` (epoch ms). */
  | { readonly ok: false; readonly waiting: true; readonly checkAt: number };

export interface StageInOptions {
  /**
   * Look at client uploads once instead of waiting for them (a job without downloads):
   * the scheduler then holds the waiting job as an id and two numbers, not as a pending
   * call with its record (docs/performance.md, "Memory").
   */
  readonly lookOnce?: boolean;
  /** When the job entered PREPARING (epoch ms), if not `job.updatedAt`: the upload wait counts from here. */
  readonly preparingSince?: number;
  /**
   * Called once the job's session directory has been checked (and made, on the job's
   * first use of it), whether it passed or not, before any transfer or upload look.
   */
  readonly sessionChecked?: () => void;
}

export interface StagingPort {
  stageIn(job: JobRecord, signal: AbortSignal, o?: StageInOptions): Promise<StageOutcome>;
  /**
   * The job has nothing to stage in (no input to download, no upload to wait for): its
   * stage-in would succeed at once, so the scheduler records its end in the same
   * transaction as its start instead of running it. Absent: every stage-in runs.
   */
  nothingToStageIn?(job: JobRecord): boolean;
  /**
   * The job's stage-out in `mode` would succeed at once with nothing written (no directory
   * was made for it and no output is to be uploaded for this outcome): the scheduler
   * records its end with its start, as for `nothingToStageIn`. Absent: every stage-out runs.
   */
  nothingToStageOut?(job: JobRecord, mode: StageOutMode): boolean;
  stageOut(job: JobRecord, mode: StageOutMode, signal: AbortSignal): Promise<StageOutcome>;
}

/**
 * What the engine needs from the sessions folder (src/sessions/session-dirs.ts):
 * a check that the job's directory is still the one it was given (before the batch
 * job starts there) and a removal that never follows what the job put in its place.
 */
export interface SessionsPort {
  /** The session directory's path, for the batch backend only (the job runs there). */
  pathOf(id: string): string;
  check(id: string, identity: string | null): Promise<void>;
  /**
   * While the job's directory has not been made: a runner on an empty directory that
   * stands for it, for a stage-out that must not make it (a job killed before it was
   * looked at). Undefined when the directory is made, being made or removed.
   */
  unmadeView?(id: string, identity: string | null): (<T>(fn: (dir: string) => Promise<T>) => Promise<T>) | undefined;
  /** Runs `fn` with the verified directory held open (a lease): data staging works only inside one. */
  withRoot<T>(id: string, identity: string | null, fn: (dir: string) => Promise<T>): Promise<T>;
  remove(
    id: string,
    identity: string | null,
    o?: { readonly findRenamed?: boolean },
  ): Promise<{ readonly found: string; readonly leftovers: readonly string[]; readonly keptForeign: boolean }>;
}
