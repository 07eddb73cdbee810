/**
 * A job's result when its wrapper left no status file: from what Slurm says about it
 * (`scontrol show job`), or "lost" when Slurm no longer knows it. The diag file is
 * written from the same facts so that the job's accounting is never empty.
 */
import { constants as os } from 'node:os';
import { lstat } from 'node:fs/promises';
import type { BatchResult } from '../backend.js';
import { lostResult, writeAtomic } from '../fork/job-files.js';
import { finalReason } from './slurm-state.js';
import type { JobRecord } from './scontrol.js';

const SIGNAL_NAMES = new Map<number, string>(Object.entries(os.signals).map(([name, n]) => [n, name]));

export function resultFromSlurm(rec: JobRecord, detail: string): BatchResult {
  const signal = rec.signal > 0 ? SIGNAL_NAMES.get(rec.signal) : undefined;
  const exitCode = rec.signal > 0 ? 128 + rec.signal : rec.exitCode;
  const reason =
    finalReason(rec.state, rec.reason) ??
    `job lost: its job wrapper left no exit status (Slurm: ${rec.state}${rec.reason && rec.reason !== 'None' ? `, ${rec.reason}` : ''})${detail ? `: ${detail}` : ''}`;
  return {
    exitCode,
    ...(signal ? { signal } : {}),
    wallTimeSeconds: rec.runSeconds,
    cpuTimeSeconds: 0,
    userTimeSeconds: 0,
    kernelTimeSeconds: 0,
    maxRssBytes: 0,
    startTime: rec.start,
    endTime: rec.end,
    nodes: rec.nodes,
    failureReason: reason,
  };
}

export { lostResult };

/** 20261125033201Z: the diag file's time format. */
function mdsTime(d: Date | null): string | undefined {
  return d
    ? d
        .toISOString()
        .replace(/[-:T]/g, '')
        .replace(/\.\d+Z$/, 'Z')
    : undefined;
}

/** Write `diag` from a result, unless the wrapper wrote its own. */
export async function writeDiagIfMissing(lrmsDir: string, r: BatchResult): Promise<void> {
  const exists = await lstat(`${lrmsDir}/diag`).then(
    () => true,
    () => false,
  );
  if (exists) return;
  const lines = [
    ...(r.nodes.length ? [`nodename=${r.nodes.join(' ')}`] : []),
    `WallTime=${r.wallTimeSeconds}s`,
    `UserTime=${r.userTimeSeconds}s`,
    `KernelTime=${r.kernelTimeSeconds}s`,
    ...(mdsTime(r.startTime) ? [`LRMSStartTime=${mdsTime(r.startTime)}`] : []),
    ...(mdsTime(r.endTime) ? [`LRMSEndTime=${mdsTime(r.endTime)}`] : []),
    ...(r.exitCode !== null ? [`exitcode=${r.exitCode}`] : []),
    ...(r.failureReason ? [`LRMSMessage=${r.failureReason.replace(/\n/g, ' ')}`] : []),
  ];
  await writeAtomic(`${lrmsDir}/diag`, `${lines.join('\n')}\n`);
}
