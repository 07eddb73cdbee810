/**
 * Handing one attempt to Grid Engine, exactly once (../core/submit-once.ts): `ge-submit`
 * is the marker written before qsub, `ge-id` the job number once qsub has answered. A qsub
 * whose answer was lost (the service killed between qsub's answer and the record, or qsub
 * timed out after the qmaster took the job) is found by the number the job wrote when it
 * started (`ge-job`), else by its name in one `qstat -u '*' -xml`: the name carries the
 * attempt's mark (a hash of its lrms directory), so no other attempt of the same Ceres job
 * is taken for it. Either way only a job of the account the attempt was submitted as is
 * adopted: any local user can submit a job with a name it guessed, and the job's own
 * account writes `ge-job`; adopting another account's job would have Ceres follow, account
 * and `qdel` (as a manager) a job that is not the attempt's. Whatever slips through: the job wrapper claims the lrms directory, so a
 * second Grid Engine job of the attempt exits without running anything.
 */
import type { AccountResolver } from '../../accounts/resolve-account.js';
import type { BatchJobSpec } from '../backend.js';
import type { BackendLog } from '../core/backend-log.js';
import { markHash } from '../core/job-mark.js';
import { submitterOf } from '../core/lrms-dir.js';
import { submitOnce as submitAttemptOnce } from '../core/submit-once.js';
import { GE_FILES, batchScript, parseJobNumber, readJobNumber, type ScriptSettings } from './job-files.js';
import { QSTAT_ARGS, parseQstatXml, type GeJob } from './qstat.js';
import type { GridEngineRunner } from './run-command.js';

export interface SubmitSettings extends ScriptSettings {
  readonly jobNamePrefix: string;
  /** Queue for jobs that name none; empty: Grid Engine chooses. */
  readonly defaultQueue: string;
  readonly wrapperPath: string;
  /** Attempts of qsub while its failure is transient (the qmaster down). */
  readonly commandAttempts: number;
  readonly backoffMs: number;
  readonly switchUser: 'runuser';
  readonly accounts: Pick<AccountResolver, 'resolve'>;
  readonly log?: BackendLog | undefined;
}

/**
 * The Grid Engine job name of an attempt: the prefix, the Ceres job id and the attempt's
 * mark, in the letters Grid Engine takes in a name (no `/ : @ \ * ?` nor white space).
 */
export function geJobName(prefix: string, spec: Pick<BatchJobSpec, 'jobId' | 'lrmsDir'>): string {
  return `${prefix}${spec.jobId}-${markHash(spec.lrmsDir).slice(0, 12)}`.replace(/[^\w.-]/g, '_');
}

/** qsub's arguments for the attempt (the script last). */
export function qsubArgs(spec: BatchJobSpec, s: Pick<SubmitSettings, 'jobNamePrefix' | 'defaultQueue'>): string[] {
  const queue = spec.queue ?? s.defaultQueue;
  return [
    '-terse',
    ...['-S', '/bin/sh', '-N', geJobName(s.jobNamePrefix, spec)],
    ...['-o', `${spec.lrmsDir}/${GE_FILES.out}`, '-j', 'y', '-wd', spec.sessionDir],
    // Never re-run on another host (the wrapper's claim would refuse it anyway), no mail.
    ...['-r', 'n', '-m', 'n'],
    ...(queue ? ['-q', queue] : []),
    `${spec.lrmsDir}/${GE_FILES.script}`,
  ];
}

/**
 * Which listed job is the lost submission: the number the job wrote when it started, if
 * Grid Engine lists it as `owner`'s (or no longer lists it: it ended, and only the
 * attempt's own account could have written the file), else the job named `name` that
 * `owner` submitted. Pure, for the tests.
 */
export function pickLost(
  jobs: ReadonlyMap<string, GeJob>,
  name: string,
  owner: string,
  started: string | undefined,
): string | undefined {
  if (started) {
    const listed = jobs.get(started);
    if (listed === undefined || listed.owner === owner) return started;
  }
  for (const j of jobs.values()) if (j.name === name && j.owner === owner) return j.id;
  return undefined;
}

/** The job of this attempt whose qsub answer was lost (see pickLost). */
async function findLost(runner: GridEngineRunner, spec: BatchJobSpec, prefix: string): Promise<string | undefined> {
  const started = await readJobNumber(spec.lrmsDir, GE_FILES.started);
  const jobs = parseQstatXml((await runner.run('qstat', QSTAT_ARGS, { attempts: 1 })).stdout);
  return pickLost(jobs, geJobName(prefix, spec), submitterOf(spec), started);
}

/** Submit the attempt and return its job number; an attempt already in Grid Engine is returned instead. */
export function submitOnce(runner: GridEngineRunner, spec: BatchJobSpec, s: SubmitSettings): Promise<string> {
  return submitAttemptOnce(spec, {
    command: 'qsub',
    name: 'gridengine',
    idFile: GE_FILES.id,
    markerFile: GE_FILES.submitting,
    mark: geJobName(s.jobNamePrefix, spec),
    attempts: s.commandAttempts,
    backoffMs: s.backoffMs,
    log: s.log,
    recorded: () => readJobNumber(spec.lrmsDir, GE_FILES.id),
    find: () => findLost(runner, spec, s.jobNamePrefix),
    files: { script: GE_FILES.script, scriptText: batchScript(spec, s), wrapper: GE_FILES.wrapper },
    wrapperPath: s.wrapperPath,
    accounts: s.accounts,
    switchUser: s.switchUser,
    runner,
    args: qsubArgs(spec, s),
    parse: parseJobNumber,
  });
}
