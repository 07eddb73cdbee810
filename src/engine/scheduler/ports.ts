/**
 * What the scheduler needs from data staging (src/staging, wired in src/service).
 * Both calls resolve (never reject) with a readable reason on failure; an aborted
 * transfer resolves `{ ok: false, aborted: true }`.
 */
import type { JobRecord } from '../../jobs/store/job-record.js';
import type { StageOutMode } from '../state-machine.js';

export type StageOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly aborted?: boolean };

export interface StagingPort {
  stageIn(job: JobRecord, signal: AbortSignal): Promise<StageOutcome>;
  stageOut(job: JobRecord, mode: StageOutMode, signal: AbortSignal): Promise<StageOutcome>;
}
