import { Type } from '@sinclair/typebox';
import { GE_CELL, JOB_NAME_PREFIX } from '../patterns.js';
import { PATH } from '../paths.js';
import { SECOND } from '../units.js';
import { jobWrapperKeys } from './job-wrapper-keys.js';

/**
 * `lrms.gridengine`: the Grid Engine batch backend (docs/batch-backends.md, "Grid
 * Engine"). Used when `lrms.backend` is `gridengine`; the session and lrms directories
 * must be on a file system the execution hosts share.
 */
export const lrmsGridEngineSection = Type.Object(
  {
    sgeRoot: Type.String({
      ...PATH,
      default: '',
      description: "SGE_ROOT for the Grid Engine commands; empty: the service's environment",
    }),
    sgeCell: Type.String({
      default: '',
      maxLength: 64,
      ...GE_CELL,
      description: "SGE_CELL for the Grid Engine commands; empty: the service's environment (Grid Engine's `default`)",
    }),
    qmasterPort: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 65535,
      description: "SGE_QMASTER_PORT; 0: the service's environment or /etc/services",
    }),
    execdPort: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 65535,
      description: "SGE_EXECD_PORT; 0: the service's environment or /etc/services",
    }),
    binDir: Type.String({
      ...PATH,
      default: '',
      description:
        "Directory holding qsub, qstat, qdel, qacct and qhost; empty: Grid Engine's own $SGE_ROOT/bin/<arch> where it holds them (not Debian's wrapper on PATH, which costs ~0.1 s a call), else PATH",
    }),
    defaultQueue: Type.String({
      default: '',
      description: 'Queue for jobs that name none; empty: Grid Engine chooses among the queues the job fits',
    }),
    jobNamePrefix: Type.String({
      default: 'ceres-',
      minLength: 1,
      maxLength: 64,
      ...JOB_NAME_PREFIX,
      description:
        'Grid Engine job names are this prefix, the Ceres job id and a mark of the attempt (how a submission whose qsub answer was lost is found again)',
    }),
    // 2 s, not Slurm's 1 s: Grid Engine itself takes 0.3-1.9 s to drop an ended job, and
    // a qstat of 20,000 jobs 0.4-0.85 s, so a 1 s interval cannot bring a change within two
    // intervals at that size (docs/batch-backends.md, "At scale").
    pollIntervalMs: Type.Integer({
      default: 2000,
      minimum: 100,
      description:
        'How often one `qstat -u * -xml` fetches the state of every job (2 s: Grid Engine itself takes up to about 2 s to drop an ended job)',
    }),
    commandTimeoutMs: Type.Integer({
      default: 30_000,
      minimum: 100,
      description: 'A Grid Engine command that has not answered by then is killed (and retried when that may help)',
    }),
    commandAttempts: Type.Integer({
      default: 6,
      minimum: 1,
      description: 'Attempts of qsub and qdel while the qmaster is unreachable; then the job fails with the reason',
    }),
    backoffMs: Type.Integer({
      default: 1000,
      minimum: 10,
      description: 'Wait before the first retry of a Grid Engine command; doubled each time, at most 30 s',
    }),
    maxConcurrentCommands: Type.Integer({
      default: 4,
      minimum: 1,
      description:
        'Grid Engine commands running at once; the engine hands over at most twice this many jobs not yet submitted, the others wait in its fair-share order',
    }),
    infoRefreshMs: Type.Integer({
      default: 30_000,
      minimum: 100,
      description:
        'How old the queue figures in the info document may get before `qstat -g c` is asked again (asked only while the document is read)',
    }),
    statusGraceMs: Type.Integer({
      default: 10_000,
      minimum: 0,
      description:
        'After a started job left qstat, how long its status file (or its qacct record) may take to appear before the job counts as lost',
    }),
    switchUser: Type.Literal('runuser', {
      default: 'runuser',
      description:
        "How qsub runs as a job's mapped local account: `runuser -u ACCOUNT --`, from the service running as root",
    }),
    ...jobWrapperKeys('Grid Engine', { one: 'execution host', many: 'execution hosts' }),
    killGraceSeconds: Type.Number({
      default: 10 * SECOND,
      minimum: 0,
      description: 'A job over a limit (or cancelled) gets SIGTERM, then SIGKILL after this long',
    }),
    sampleIntervalMs: Type.Integer({
      default: 1000,
      minimum: 50,
      description: 'How often the wrapper measures memory and CPU of jobs that have such limits',
    }),
  },
  { default: {}, additionalProperties: false },
);
