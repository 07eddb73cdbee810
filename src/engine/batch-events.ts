/**
 * Turns a batch backend's update into the state machine's event, so the scheduler's
 * update listener is one line. Readable reasons: a failure reported by the backend
 * (limits, cancel, lost job) is passed on; a job killed by a signal says which.
 */
import type { BatchState, BatchUpdate } from '../lrms/backend.js';
import type { LrmsSubState } from '../vocabulary/job-states.js';
import type { EngineEvent } from './state-machine.js';

// The batch contract names its states itself; they are the engine's INLRMS sub-states
// name for name, and this line stops the build when one list changes without the other.
const sameBatchStates: [BatchState, LrmsSubState] extends [LrmsSubState, BatchState] ? true : never = true;
void sameBatchStates;

export interface BatchEventOptions {
  /** Exit code that means success (ADL FailIfExitCodeNotEqualTo); default 0. */
  readonly expectedExitCode?: number;
  /** The stage-out step has no free slot: the job waits as PENDING:INLRMS. */
  readonly hold?: boolean;
}

export function batchUpdateEvent(localId: string, update: BatchUpdate, options: BatchEventOptions = {}): EngineEvent {
  if (update.kind === 'state') return { type: 'lrms-state', lrmsState: update.state, localId };
  const r = update.result;
  const hold = options.hold === true;
  if (r.failureReason !== undefined)
    return { type: 'lrms-failed', reason: r.failureReason, exitCode: r.exitCode, hold, localId };
  if (r.signal !== undefined)
    return { type: 'lrms-failed', reason: `Job was killed by signal ${r.signal}`, exitCode: r.exitCode, hold, localId };
  if (r.exitCode === null)
    return { type: 'lrms-failed', reason: 'Job exit status is unknown', exitCode: null, hold, localId };
  return {
    type: 'lrms-done',
    exitCode: r.exitCode,
    hold,
    localId,
    ...(options.expectedExitCode !== undefined ? { expectedExitCode: options.expectedExitCode } : {}),
  };
}
