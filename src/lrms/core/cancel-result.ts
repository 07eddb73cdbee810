import type { BatchResult } from '../backend.js';

/**
 * The result of a job after a cancel was asked for at `cancelledAt` (0: never). A batch
 * system signals every process of a cancelled job at once, so the job may end "cleanly"
 * (a shell whose child died first) before its wrapper sees the cancel: a job that ended
 * after the cancel ended because of it, unless a limit stopped it.
 */
export function afterCancel(result: BatchResult, cancelledAt: number): BatchResult {
  if (cancelledAt === 0) return result;
  const first = result.endTime !== null && result.endTime.getTime() < cancelledAt;
  if (first || /^(wall|cpu|memory) /.test(result.failureReason ?? '')) return result;
  return { ...result, failureReason: 'cancelled' };
}
