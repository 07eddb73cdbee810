/**
 * The job wrapper's arguments (./wrapper-c.ts reads them by position), made
 * in one place for every backend that runs the wrapper: the fork backend's launcher and
 * the Slurm batch script. A second copy drifted once when the wrapper gained an argument.
 *
 * The fork backend hands them to the C wrapper in a file (ARGS_FILE in the job's lrms
 * directory, named by the ARGS_ENV variable), not on its command line: any local user
 * reads command lines with ps, and these name the job's lrms and session directories.
 */
import type { BatchJobSpec } from '../backend.js';
import { jobMark } from './job-mark.js';

export interface WrapperSettings {
  readonly killGraceSeconds: number;
  readonly sampleIntervalMs: number;
  /** The job's own cgroup, or '' when the batch system holds its processes. */
  readonly cgroup: string;
  /** The identity to switch to, or '' for none (Slurm already runs the job as its account). */
  readonly credential: string;
  /** Where the job's private /tmp and /dev/shm are made, or '' for none (./scratch-dirs.ts). */
  readonly scratch: string;
}

export function wrapperArgs(spec: BatchJobSpec, s: WrapperSettings): string[] {
  const join = spec.join === true || (spec.stdout !== undefined && spec.stdout === spec.stderr);
  const { wallTimeSeconds, cpuTimeSeconds, memoryBytes } = spec.limits;
  return [
    spec.lrmsDir,
    spec.sessionDir,
    spec.stdin ?? '',
    spec.stdout ?? '',
    join ? '' : (spec.stderr ?? ''),
    join ? '1' : '0',
    String(wallTimeSeconds === undefined ? 0 : Math.ceil(wallTimeSeconds)),
    String(cpuTimeSeconds === undefined ? 0 : Math.ceil(cpuTimeSeconds)),
    String(memoryBytes === undefined ? 0 : Math.ceil(memoryBytes / 1024)),
    String(s.killGraceSeconds),
    String(s.sampleIntervalMs),
    s.cgroup,
    jobMark(spec.lrmsDir),
    s.credential,
    s.scratch,
  ];
}

/** The file of the wrapper's arguments in the job's lrms directory (0700, the service's). */
export const ARGS_FILE = 'args';
/** The environment variable naming ARGS_FILE; the wrapper removes it before the job starts. */
export const ARGS_ENV = 'CERES_WRAPPER_ARGS';

/** ARGS_FILE's text: each argument ended by a NUL (no argument holds one: validateSpec). */
export function argsFileText(args: readonly string[]): string {
  return args.map((a) => `${a}\0`).join('');
}
