/**
 * The `diag` file (A-REX key=value accounting) of a Kubernetes job, from the figures the pod's
 * status gives: no CPU times or memory (the kubelet reports none in the pod status), so those
 * are written as 0 and the resident memory line is left out.
 */
import type { BatchResult } from '../backend.js';
import { writeFileAtomic } from '../../fs/atomic-write.js';

/** YYYYMMDDhhmmssZ, the time form of the diag file. */
const diagTime = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z');

export async function writeKubeDiag(lrmsDir: string, r: BatchResult): Promise<void> {
  const lines = [
    ...(r.nodes.length ? [`nodename=${r.nodes.join(' ')}`] : []),
    `WallTime=${r.wallTimeSeconds}s`,
    `UserTime=${r.userTimeSeconds}s`,
    `KernelTime=${r.kernelTimeSeconds}s`,
    ...(r.startTime ? [`LRMSStartTime=${diagTime(r.startTime)}`] : []),
    ...(r.endTime ? [`LRMSEndTime=${diagTime(r.endTime)}`] : []),
    ...(r.exitCode !== null ? [`exitcode=${r.exitCode}`] : []),
    ...(r.failureReason ? [`LRMSMessage=${r.failureReason.replace(/\n/g, ' ')}`] : []),
  ];
  await writeFileAtomic(`${lrmsDir}/diag`, `${lines.join('\n')}\n`);
}
