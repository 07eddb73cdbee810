/**
 * A job's result when its wrapper left no status file: from what Slurm says about it
 * (`scontrol show job`, or sacct once the controller forgot it), or "lost" when Slurm no
 * longer knows it; and the diag file written from the result the backend reports.
 */
import type { BatchResult } from '../backend.js';
import { stat } from 'node:fs/promises';
import { STATUS_FILE, STATUS_UNWRITTEN_EXIT, lostResult } from '../core/job-files.js';
export { writeDiag } from '../core/diag-file.js';
import { wrapperWriteErrors } from './lrms-files.js';
import { finalReason } from './slurm-state.js';
import { signalName, type SlurmFigures } from './slurm-figures.js';

/**
 * `unwritten`: why the job's end went unrecorded when that is known (statusUnwritten):
 * the reason then, not "job lost", and no exit code (the batch script's is the
 * wrapper's own, not the job's).
 */
export function resultFromSlurm(rec: SlurmFigures, detail: string, unwritten?: string): BatchResult {
  const signal = rec.signal > 0 ? signalName(rec.signal) : undefined;
  const exitCode = unwritten !== undefined ? null : rec.signal > 0 ? 128 + rec.signal : rec.exitCode;
  const reason =
    finalReason(rec.state, rec.reason) ??
    unwritten ??
    `job lost: its job wrapper left no exit status (Slurm: ${rec.state}${rec.reason && rec.reason !== 'None' ? `, ${rec.reason}` : ''})${detail ? `: ${detail}` : ''}`;
  const user = rec.userCpuSeconds ?? 0;
  const kernel = rec.systemCpuSeconds ?? 0;
  return {
    exitCode,
    ...(signal ? { signal } : {}),
    wallTimeSeconds: rec.runSeconds,
    cpuTimeSeconds: user + kernel,
    userTimeSeconds: user,
    kernelTimeSeconds: kernel,
    maxRssBytes: rec.maxRssBytes ?? 0,
    startTime: rec.start,
    endTime: rec.end,
    nodes: rec.nodes,
    failureReason: reason,
    // The batch step's exit code is the batch script's, which the job's account ran.
    ...(signal === undefined && exitCode !== null ? { jobReported: ['exitCode' as const] } : {}),
  };
}

export { lostResult };

/**
 * Why a job's wrapper left no status file, when that is known: what the wrapper said on
 * slurm.out (the file and the system's reason), or, when that output is out of reach (a
 * restored lrms directory is a new one; the wrapper wrote into the old), its exit code
 * STATUS_UNWRITTEN_EXIT and who owns the directory now. Undefined otherwise (lost).
 */
export async function statusUnwritten(
  lrmsDir: string,
  rec: Pick<SlurmFigures, 'exitCode' | 'signal'> | undefined,
): Promise<string | undefined> {
  const said = await wrapperWriteErrors(lrmsDir);
  if (said.length > 0) return `the job's end was not recorded: the job wrapper ${said.join('; ')}`;
  if (rec === undefined || rec.signal > 0 || rec.exitCode !== STATUS_UNWRITTEN_EXIT) return undefined;
  const s = await stat(lrmsDir).catch(() => undefined);
  const where =
    s === undefined
      ? `${lrmsDir} is gone`
      : `the job's account must reach and write ${lrmsDir} when the job ends (now: uid ${s.uid}, mode ${(s.mode & 0o7777).toString(8).padStart(4, '0')})`;
  return `the job's end was not recorded: the job wrapper could not write its status file ${lrmsDir}/${STATUS_FILE} (exit ${STATUS_UNWRITTEN_EXIT}): ${where}`;
}

/** The result of a job whose end went unrecorded for a known reason (`statusUnwritten`), Slurm's figures unknown. */
export function unwrittenResult(reason: string): BatchResult {
  return { ...lostResult(''), failureReason: reason };
}
