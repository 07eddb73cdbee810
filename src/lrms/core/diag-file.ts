/**
 * The diag file of a job's lrms directory, written by a backend that has the batch
 * system's own figures of a job's end (A-REX's `diag` keys: node names, times, the exit
 * code, the message).
 */
import type { BatchResult } from '../backend.js';
import { writeAtomic } from './job-files.js';

/** 20261125033201Z: the diag file's time format. */
function mdsTime(d: Date | null): string | undefined {
  return d
    ? d
        .toISOString()
        .replace(/[-:T]/g, '')
        .replace(/\.\d+Z$/, 'Z')
    : undefined;
}

/**
 * Write `diag` from the result the backend reports. It replaces the wrapper's own: that one
 * lies in a directory of the job's account, so it is the job's word like the status file,
 * and the result holds the batch system's figures where it has them. `ReportedByJob` names the
 * figures that are still the job's word (usage-figures.ts).
 */
export async function writeDiag(lrmsDir: string, r: BatchResult): Promise<void> {
  const lines = [
    ...(r.nodes.length ? [`nodename=${r.nodes.join(' ')}`] : []),
    `WallTime=${r.wallTimeSeconds}s`,
    `UserTime=${r.userTimeSeconds}s`,
    `KernelTime=${r.kernelTimeSeconds}s`,
    ...(r.maxRssBytes > 0 ? [`MaxResidentMemory=${Math.ceil(r.maxRssBytes / 1024)}kB`] : []),
    ...(mdsTime(r.startTime) ? [`LRMSStartTime=${mdsTime(r.startTime)}`] : []),
    ...(mdsTime(r.endTime) ? [`LRMSEndTime=${mdsTime(r.endTime)}`] : []),
    ...(r.exitCode !== null ? [`exitcode=${r.exitCode}`] : []),
    ...(r.failureReason ? [`LRMSMessage=${r.failureReason.replace(/\n/g, ' ')}`] : []),
    ...(r.jobReported?.length ? [`ReportedByJob=${r.jobReported.join(',')}`] : []),
  ];
  await writeAtomic(`${lrmsDir}/diag`, `${lines.join('\n')}\n`);
}
