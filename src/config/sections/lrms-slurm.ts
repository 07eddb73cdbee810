import { Type } from '@sinclair/typebox';
import { JOB_NAME_PREFIX } from '../patterns.js';
import { PATH } from '../paths.js';
import { SECOND } from '../units.js';
import { jobWrapperKeys } from './job-wrapper-keys.js';

/**
 * `lrms.slurm`: the Slurm batch backend (docs/batch-backends.md, "Slurm"). Used when
 * `lrms.backend` is `slurm`; the session and lrms directories must be on a file system
 * the compute nodes share.
 */
export const lrmsSlurmSection = Type.Object(
  {
    slurmConf: Type.String({
      ...PATH,
      default: '',
      description:
        "SLURM_CONF for the Slurm commands; empty: the service's environment (SLURM_CONF, or Slurm's own default)",
    }),
    binDir: Type.String({
      ...PATH,
      default: '',
      description: 'Directory holding sbatch, squeue, scancel, scontrol and sinfo; empty: found on PATH',
    }),
    defaultPartition: Type.String({
      default: '',
      description: "Partition for jobs that name no queue; empty: Slurm's default partition",
    }),
    jobNamePrefix: Type.String({
      default: 'ceres-',
      minLength: 1,
      maxLength: 64,
      ...JOB_NAME_PREFIX,
      description:
        'Slurm job names are this prefix and the Ceres job id (give each Ceres instance fronting one cluster its own)',
    }),
    pollIntervalMs: Type.Integer({
      default: 1000,
      minimum: 100,
      description:
        'How often one squeue call fetches the state of every job (raise it to 10-30 s for tens of thousands of jobs)',
    }),
    commandTimeoutMs: Type.Integer({
      default: 30_000,
      minimum: 100,
      description: 'A Slurm command that has not answered by then is killed (and retried when that may help)',
    }),
    commandAttempts: Type.Integer({
      default: 6,
      minimum: 1,
      description:
        'Attempts of sbatch, scancel and scontrol while the controller is unreachable; then the job fails with the reason',
    }),
    backoffMs: Type.Integer({
      default: 1000,
      minimum: 10,
      description: 'Wait before the first retry of a Slurm command; doubled each time, at most 30 s',
    }),
    maxConcurrentCommands: Type.Integer({
      default: 4,
      minimum: 1,
      description:
        'Slurm commands running at once; the engine hands over at most twice this many jobs not yet submitted, the others wait in its fair-share order',
    }),
    infoRefreshMs: Type.Integer({
      default: 30_000,
      minimum: 100,
      description:
        'How old the partitions, slots and job counts in the info document may get before sinfo is asked again (asked only while the document is read)',
    }),
    statusGraceMs: Type.Integer({
      default: 10_000,
      minimum: 0,
      description:
        "After Slurm reports a started job over, how long its status file may take to appear on the shared file system before Slurm's own record is used",
    }),
    accountingWaitMs: Type.Integer({
      default: 30_000,
      minimum: 0,
      description:
        "Where the cluster keeps accounting (slurmdbd), how long after a job's end its record may take to reach sacct before the controller's figures (no CPU time or memory) are used instead",
    }),
    extraSbatchArgs: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description: 'Options added to every sbatch, e.g. `--account=grid` or `--qos=...`',
    }),
    // Only runuser: sbatch runs as a mapped account only from a root service (a service
    // that is not root refuses a mapping), and root needs no sudo rule. The key stays so
    // that configurations naming runuser still load; `sudo` is refused with the reason
    // (src/config/load.ts).
    switchUser: Type.Literal('runuser', {
      default: 'runuser',
      description:
        "How sbatch runs as a job's mapped local account: `runuser -u ACCOUNT --`, from the service running as root (the only value; `sudo` is refused)",
    }),
    ...jobWrapperKeys('Slurm', { one: 'compute node', many: 'compute nodes' }),
    killGraceSeconds: Type.Number({
      default: 10 * SECOND,
      minimum: 0,
      description: 'A job over a limit gets SIGTERM, then SIGKILL after this long',
    }),
    sampleIntervalMs: Type.Integer({
      default: 1000,
      minimum: 50,
      description: 'How often the wrapper measures memory and CPU of jobs that have such limits',
    }),
  },
  { default: {}, additionalProperties: false },
);
