/**
 * The job wrapper's command line (src/lrms/fork/wrapper-c.ts reads it by position), made
 * in one place for every backend that runs the wrapper: the fork backend's launcher and
 * the Slurm batch script. A second copy drifted once when the wrapper gained an argument.
 */
import type { BatchJobSpec } from '../backend.js';
import { jobMark } from './job-processes.js';

export interface WrapperSettings {
  readonly killGraceSeconds: number;
  readonly sampleIntervalMs: number;
  /** The job's own cgroup, or '' when the batch system holds its processes. */
  readonly cgroup: string;
  /** The identity to switch to, or '' for none (Slurm already runs the job as its account). */
  readonly credential: string;
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
  ];
}
