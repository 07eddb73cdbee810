import type { BatchResult } from '../backend.js';

/**
 * The result of a job after a cancel was asked for at `cancelledAt` (0: never). A batch
 * system signals every process of a cancelled job at once, so the job may end "cleanly"
 * (a shell whose child died first) before its wrapper sees the cancel: a job that ended
 * after the cancel ended because of it, unless a limit stopped it.
 */
export function afterCancel(result: BatchResult, cancelledAt: number): BatchResult {
  if (cancelledAt === 0) return result;
  // Batch systems give end times in whole seconds (Slurm's EndTime, Grid Engine's
  // end_time): an end in the second the cancel was asked in may be after it, so only an
  // end before that second came first.
  const first = result.endTime !== null && result.endTime.getTime() < Math.floor(cancelledAt / 1000) * 1000;
  if (first || /^(wall|cpu|memory) /.test(result.failureReason ?? '')) return result;
  return { ...result, failureReason: 'cancelled' };
}
