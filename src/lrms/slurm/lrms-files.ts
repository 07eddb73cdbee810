/**
 * The files the Slurm backend keeps in a job's lrms directory, next to the job wrapper's
 * own (`pid`, `status`, `diag`, `failure`, `job.sh`: ../core/job-files.ts). The lrms and
 * session directories must be on a file system the compute nodes share.
 *
 *   slurm-submit  written before sbatch runs: a submission may be under way (its answer may be lost)
 *   slurm-id      the Slurm job id, once sbatch has answered
 *   slurm-job     the Slurm job id, written by the job itself when it starts on a node
 *   slurm.sh      the batch script handed to sbatch
 *   slurm.out     what the batch script and the wrapper print (not the job's output)
 *   wrapper       the job wrapper executable the batch script runs
 */
import { batchOutputHead } from '../core/job-files.js';
import { readJobFile } from '../job-file.js';

export const LRMS_FILES = {
  submitting: 'slurm-submit',
  slurmId: 'slurm-id',
  started: 'slurm-job',
  script: 'slurm.sh',
  slurmOut: 'slurm.out',
  wrapper: 'wrapper',
} as const;

/** A Slurm job id as sbatch --parsable prints it (`123`, or `123;cluster`). */
export function parseJobId(text: string): string | undefined {
  const m = /^\s*(\d+)(?:;\S+)?\s*$/.exec(text);
  return m ? m[1] : undefined;
}

/** The Slurm job id recorded in `file` of the lrms directory, or undefined. */
export async function readJobIdFile(lrmsDir: string, file: string): Promise<string | undefined> {
  const text = await readJobFile(`${lrmsDir}/${file}`, 256).catch(() => undefined);
  return text === undefined ? undefined : parseJobId(text);
}

/** The first lines of slurm.out, for a job's error message when the wrapper left no status. */
export const slurmOutHead = (lrmsDir: string): Promise<string> => batchOutputHead(`${lrmsDir}/${LRMS_FILES.slurmOut}`);

/**
 * What the job wrapper said on slurm.out about files it could not write (`error cannot
 * write the <name> file <path>: <reason>`, ../core/wrapper-c.ts), each without `error `.
 */
export async function wrapperWriteErrors(lrmsDir: string): Promise<string[]> {
  const text = await readJobFile(`${lrmsDir}/${LRMS_FILES.slurmOut}`, 64 * 1024).catch(() => undefined);
  return (text ?? '')
    .split('\n')
    .filter((l) => /^error cannot write the \w+ file /.test(l))
    .map((l) => l.slice('error '.length).slice(0, 300));
}
