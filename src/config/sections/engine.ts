import { Type } from '@sinclair/typebox';
import { HOUR, SECOND } from '../units.js';
import { lrmsKubernetesSection } from './lrms-kubernetes.js';
import { lrmsSlurmSection } from './lrms-slurm.js';
import { lrmsGridEngineSection } from './lrms-gridengine.js';

const limit = (description: string) =>
  Type.Integer({ default: 0, minimum: 0, description: `${description}; 0 = no limit` });

/**
 * Job engine: processing limits (A-REX `maxjobs`), restarts; batch backend (lrms).
 * Keys live under `engine` and `lrms`; every key needs a default and a line in
 * docs/configuration.md.
 */
export const engineSection = {
  engine: Type.Object(
    {
      maxActiveJobs: limit(
        'Jobs between ACCEPTED and FINISHING (pending ones included); further new jobs wait unprocessed (REST ACCEPTING)',
      ),
      maxPreparingJobs: limit('Jobs in stage-in at once; others wait as PENDING:ACCEPTED (REST ACCEPTED)'),
      maxRunningJobs: limit(
        'Jobs submitted or in the batch system at once; others wait as PENDING:PREPARING (REST PREPARED)',
      ),
      maxFinishingJobs: limit('Jobs in stage-out at once; others wait as PENDING:INLRMS (REST EXECUTED)'),
      maxJobsPerUser: limit('Active jobs of one owner; further ones wait as PENDING:ACCEPTED'),
      maxRunningJobsPerUser: Type.Integer({
        default: 100,
        minimum: 0,
        description:
          'Jobs of one owner submitted or in the batch system at once; further ones wait as PENDING:PREPARING (REST PREPARED), freed slots go to owners in turn, so one user cannot take the host; 0 = no limit. Raise it for a large batch cluster',
      }),
      maxReruns: Type.Integer({
        default: 5,
        minimum: 0,
        description: 'Upper bound on the restarts a job description may ask for (A-REX maxrerun)',
      }),
      cancelTimeoutSeconds: Type.Number({
        default: 1 * HOUR,
        exclusiveMinimum: 0,
        description:
          'How long a KILLING job waits for the batch system to confirm the end of its batch job before moving on',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
  lrms: Type.Object(
    {
      backend: Type.Union(
        [Type.Literal('fork'), Type.Literal('slurm'), Type.Literal('gridengine'), Type.Literal('kubernetes')],
        {
          default: 'fork',
          description:
            'Batch backend: `fork` runs jobs on this host; `slurm` submits them to a Slurm cluster (`lrms.slurm`); `gridengine` to a Grid Engine cell (`lrms.gridengine`); `kubernetes` runs each as a Job in a cluster (`lrms.kubernetes`)',
        },
      ),
      fork: Type.Object(
        {
          wrapper: Type.Union([Type.Literal('auto'), Type.Literal('c'), Type.Literal('sh')], {
            default: 'auto',
            description:
              'Job wrapper: `c` is compiled with `compiler` on first use (exact accounting, memory limit); `sh` needs no compiler (whole-second times, no memory figures); `auto` tries c, then sh',
          }),
          compiler: Type.String({
            default: 'cc',
            minLength: 1,
            description: 'C compiler command for the job wrapper and the launcher',
          }),
          launcher: Type.Union([Type.Literal('auto'), Type.Literal('c'), Type.Literal('node')], {
            default: 'auto',
            description:
              'Process that starts job wrappers: `c` is compiled with `compiler` on first use (about a fifth of the CPU per job); `node` needs no compiler; `auto` tries c, then node',
          }),
          jobPath: Type.String({
            default: '/usr/local/bin:/usr/bin:/bin',
            minLength: 1,
            description: 'PATH jobs start with',
          }),
          killGraceSeconds: Type.Number({
            default: 10 * SECOND,
            minimum: 0,
            description: 'A cancelled job or one over a limit gets SIGTERM, then SIGKILL after this long',
          }),
          sampleIntervalMs: Type.Integer({
            default: 1000,
            minimum: 50,
            description: 'How often the wrapper measures memory and CPU of jobs that have such limits',
          }),
          pollIntervalMs: Type.Integer({
            default: 1000,
            minimum: 50,
            description: 'How often the status files of jobs started before a service restart are checked',
          }),
          cgroups: Type.Union([Type.Literal('auto'), Type.Literal('off')], {
            default: 'auto',
            description:
              'Each job in its own cgroup v2 (which none of its processes can leave) when the service may create cgroups under its own; `off`: processes are tracked by their environment mark and session only. The log says which is active',
          }),
          privateTmp: Type.Union([Type.Literal('auto'), Type.Literal('off')], {
            default: 'auto',
            description:
              "Jobs under local accounts get a private /tmp, /var/tmp and /dev/shm (a mount namespace made by the root job wrapper, folders removed with the job) where the kernel allows it (a root service with CAP_SYS_ADMIN); `off`: jobs share the host's. The log says which is active",
          }),
          backstopIntervalMs: Type.Integer({
            default: 10_000,
            minimum: 100,
            description:
              "Backstop: how often every running job is checked for an end that was not reported (a stat of its status file and a read of its wrapper's /proc entry per job, one pass at a time)",
          }),
        },
        { default: {}, additionalProperties: false },
      ),
      slurm: lrmsSlurmSection,
      gridengine: lrmsGridEngineSection,
      kubernetes: lrmsKubernetesSection,
    },
    { default: {}, additionalProperties: false },
  ),
};
