/**
 * Slurm job states (squeue %T, scontrol JobState) in the REST interface's batch terms.
 * A state in FINAL_STATES means Slurm considers the job over; the job's own status file
 * (written by the wrapper) then gives its exit code and usage.
 */
import type { BatchState } from '../backend.js';

export const FINAL_STATES: ReadonlySet<string> = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'OUT_OF_MEMORY',
  'REVOKED',
  'SPECIAL_EXIT',
]);

/** Pending reasons that mean someone holds the job (it will not start by itself). */
const HELD_REASONS = /^(JobHeldUser|JobHeldAdmin|BeginTime|Dependency|DependencyNeverSatisfied|JobArrayTaskLimit)$/;

/** The batch sub-state of a job Slurm still runs or queues; undefined for a final state. */
export function batchState(state: string, reason: string): BatchState | undefined {
  if (FINAL_STATES.has(state)) return undefined;
  switch (state) {
    case 'PENDING':
    case 'REQUEUED':
    case 'CONFIGURING':
      return HELD_REASONS.test(reason) ? 'HELD' : 'QUEUING';
    case 'REQUEUE_HOLD':
    case 'REQUEUE_FED':
    case 'SUSPENDED':
    case 'STOPPED':
      return 'HELD';
    case 'RUNNING':
    case 'RESIZING':
    case 'SIGNALING':
      return 'RUNNING';
    case 'COMPLETING':
    case 'STAGE_OUT':
      return 'EXITINGLRMS';
    default:
      return 'OTHER';
  }
}

/** The failure reason for a job that Slurm ended without a status file from the wrapper. */
export function finalReason(state: string, reason: string): string | undefined {
  switch (state) {
    case 'CANCELLED':
      return 'cancelled';
    case 'TIMEOUT':
    case 'DEADLINE':
      return 'wall time limit exceeded';
    case 'OUT_OF_MEMORY':
      return 'memory limit exceeded';
    case 'NODE_FAIL':
      return `job lost: node failure${reason && reason !== 'None' ? ` (${reason})` : ''}`;
    case 'BOOT_FAIL':
      return 'job lost: the node failed to boot';
    case 'PREEMPTED':
      return 'job lost: preempted by Slurm';
    default:
      return undefined;
  }
}
