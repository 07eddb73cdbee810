/**
 * The sbatch command line for a job spec. Limits map onto Slurm's own, with a margin on
 * the time limit: the job wrapper enforces the exact wall time (and CPU time and memory)
 * itself and reports which limit was hit; Slurm's limit, a minute or more later, is the
 * backstop that also holds when the wrapper cannot act. Pure: builds arguments, no I/O.
 */
import { createHash } from 'node:crypto';
import type { BatchJobSpec } from '../backend.js';
import { LRMS_FILES } from './lrms-files.js';

export interface SbatchSettings {
  /** Job names are this prefix followed by the Ceres job id. */
  readonly jobNamePrefix: string;
  /** Partition for jobs that name no queue; empty: Slurm's default partition. */
  readonly defaultPartition: string;
  /** Seconds the wrapper gives a stopped job between TERM and KILL (part of the time margin). */
  readonly killGraceSeconds: number;
  /** Site options added to every submission (e.g. `--account=grid`, `--qos=...`). */
  readonly extraArgs: readonly string[];
  /** A partition's time limit in whole minutes (sinfo), when known and not unlimited. */
  readonly maxMinutesOf?: (partition: string) => number | undefined;
}

/** The marker that ties a Slurm job to one attempt (lrms directory) of one Ceres job. */
export function attemptTag(spec: Pick<BatchJobSpec, 'jobId' | 'lrmsDir'>): string {
  return `ceres:${spec.jobId}:${createHash('sha256').update(spec.lrmsDir).digest('hex').slice(0, 12)}`;
}

export function jobName(settings: Pick<SbatchSettings, 'jobNamePrefix'>, jobId: string): string {
  return `${settings.jobNamePrefix}${jobId}`;
}

/** Whole minutes for `--time`: the limit, the wrapper's grace time and a minute of margin, rounded up. */
export function timeLimitMinutes(
  spec: Pick<BatchJobSpec, 'limits' | 'slots'>,
  killGraceSeconds: number,
): number | undefined {
  const { wallTimeSeconds, cpuTimeSeconds } = spec.limits;
  // Without a wall time, the CPU time spread over the slots bounds the wall time (as A-REX does).
  const seconds =
    wallTimeSeconds ?? (cpuTimeSeconds !== undefined ? cpuTimeSeconds / Math.max(1, spec.slots) : undefined);
  if (seconds === undefined) return undefined;
  return Math.ceil((seconds + killGraceSeconds + 60) / 60);
}

/** What only the Slurm backend checks (the common checks are validateSpec's). */
export function slurmSpecProblem(spec: BatchJobSpec): string | undefined {
  const per = spec.slotsPerNode;
  if (per !== undefined && !(Number.isInteger(per) && per >= 1 && spec.slots % per === 0)) {
    return `slots per node (${per}) must be a positive integer dividing the slots (${spec.slots})`;
  }
  return undefined;
}

/** Arguments of `sbatch` (without the script path, which comes last). */
export function sbatchArgs(spec: BatchJobSpec, settings: SbatchSettings): string[] {
  const out = `${spec.lrmsDir}/${LRMS_FILES.slurmOut}`;
  const args = [
    '--parsable',
    `--job-name=${jobName(settings, spec.jobId)}`,
    `--comment=${attemptTag(spec)}`,
    `--chdir=${spec.sessionDir}`,
    // The wrapper's own messages; the job's stdout and stderr go where the spec says.
    `--output=${out}`,
    `--error=${out}`,
    // The job gets sbatch's environment, which the runner keeps minimal (PATH, SLURM_CONF):
    // the service's own environment is not the job's business, and --export=NONE would make
    // slurmd run a login shell for every job (three times slower for short jobs here).
    '--export=ALL',
    '--no-requeue',
    `--ntasks=${spec.slots}`,
  ];
  // A route's partition replaces the queue's (docs/routes.md); its values come from the
  // configuration only, each a whole argument (sbatch is started without a shell).
  const route = spec.route;
  const partition =
    route?.partition ?? (spec.queue !== undefined && spec.queue !== '' ? spec.queue : settings.defaultPartition);
  if (partition !== '') args.push(`--partition=${partition}`);
  if (spec.slotsPerNode !== undefined) {
    args.push(`--ntasks-per-node=${spec.slotsPerNode}`, `--nodes=${Math.ceil(spec.slots / spec.slotsPerNode)}`);
  }
  if (spec.exclusive === true) args.push('--exclusive');
  const minutes = timeLimitMinutes(spec, settings.killGraceSeconds);
  // The margin is a backstop (the wrapper enforces the exact wall time): never past the
  // partition's limit, or a job whose wall time the partition allows would be refused by
  // sbatch (EnforcePartLimits) or held for the margin alone.
  const cap = partition !== '' ? settings.maxMinutesOf?.(partition) : undefined;
  if (minutes !== undefined) args.push(`--time=${cap !== undefined ? Math.min(minutes, cap) : minutes}`);
  // Per slot: --mem would be per node, wrong for a job spread over several.
  const memory = spec.limits.memoryBytes;
  if (memory !== undefined) args.push(`--mem-per-cpu=${Math.max(1, Math.ceil(memory / spec.slots / (1024 * 1024)))}M`);
  if (route?.account !== undefined) args.push(`--account=${route.account}`);
  if (route?.qos !== undefined) args.push(`--qos=${route.qos}`);
  // The route's own options after the site's: where both set one, sbatch takes the later.
  args.push(...settings.extraArgs, ...(route?.extraArgs ?? []));
  return args;
}
