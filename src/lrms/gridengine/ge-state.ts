/**
 * Grid Engine's job states (qstat's state letters, as `qw`, `hqw`, `r`, `t`, `Rr`, `s`,
 * `dr`, `Eqw`) mapped to the REST sub-states; the native name travels with each update.
 * The letters combine: d (deletion asked) wins over everything, then E (error: the job
 * cannot start until an operator clears it; the backend ends it), then h (held), then
 * s/S/T (suspended by the user, the queue or a threshold), then r/t (running,
 * transferring to the host), then q (waiting).
 */
import type { BatchState } from '../backend.js';

/** The sub-state of a state string, or 'error' for a job in error state (E). */
export function geBatchState(native: string): BatchState | 'error' {
  if (native.includes('d')) return 'EXITINGLRMS';
  if (native.includes('E')) return 'error';
  if (native.includes('h')) return 'HELD';
  if (/[sST]/.test(native)) return 'OTHER';
  if (/[rt]/.test(native)) return 'RUNNING';
  if (native.includes('q') || native.includes('w')) return 'QUEUING';
  return 'OTHER';
}

/**
 * Why Grid Engine keeps a job from running, as the batch system's reason (BatchUpdate
 * `reason`, stored as the job's batchReason: src/jobs/wait-reason.ts), read from the same
 * state letters in the same order of precedence; undefined for a job that runs or merely waits
 * for the scheduler (`qw`). Only the letters are read: the `qstat -xml` poll (one call for all
 * jobs, also with `-r`) carries no scheduling message, which only a `qstat -j` per job would
 * give, and a hold's kind (user, operator, system) is not in it either.
 */
export function geReason(native: string): string | undefined {
  if (native.includes('d')) return 'deletion asked';
  if (native.includes('E')) return 'error state';
  if (native.includes('h')) return 'held';
  if (native.includes('s')) return 'suspended';
  if (native.includes('S')) return 'its queue is suspended';
  if (native.includes('T')) return 'suspended by a load threshold of its queue';
  return undefined;
}
