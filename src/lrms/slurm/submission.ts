/**
 * Handing one attempt to Slurm, exactly once (../core/submit-once.ts): `slurm-submit` is
 * the marker written before sbatch, `slurm-id` the id once answered; an sbatch whose
 * answer was lost is found by the id the job wrote when it started (`slurm-job`), else by
 * its name and attempt tag (the job's comment) in squeue. Whatever slips through: the job
 * wrapper claims the directory, so a second Slurm job for the same attempt exits at once
 * without running anything.
 */
import type { BatchJobSpec } from '../backend.js';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import { submitterOf, switchUserPrefix } from '../core/lrms-dir.js';
import { submitOnce as submitAttemptOnce } from '../core/submit-once.js';
import { batchScript, type ScriptSettings } from './batch-script.js';
import { LRMS_FILES, parseJobId, readJobIdFile } from './lrms-files.js';
import type { SlurmRunner } from './run-command.js';
import { attemptTag, jobName, sbatchArgs, type SbatchSettings } from './sbatch-options.js';
import { parseIdComment, squeueByNameArgs } from './squeue.js';

export interface SubmitSettings extends SbatchSettings, ScriptSettings {
  /** Path of the job wrapper executable to place in each lrms directory. */
  readonly wrapperPath: string;
  /** Attempts of sbatch while its failure is transient (the controller down). */
  readonly submitAttempts: number;
  readonly backoffMs: number;
  /** Command that switches to the job's account: `runuser` (as `runuser -u ACCOUNT --`, from a root service). */
  readonly switchUser: 'runuser';
  /** Local accounts by name: refuses root and accounts below the site's minimum uid. */
  readonly accounts: Pick<AccountResolver, 'resolve'>;
  readonly log?: { warn(obj: object, msg: string): void };
}

export { switchUserPrefix };

/** The Slurm job of this attempt whose sbatch answer was lost: the id it wrote when it started, or its tag in squeue. */
async function findLost(runner: SlurmRunner, spec: BatchJobSpec, s: SbatchSettings): Promise<string | undefined> {
  const started = await readJobIdFile(spec.lrmsDir, LRMS_FILES.started);
  if (started) return started;
  const { stdout } = await runner.run('squeue', squeueByNameArgs(jobName(s, spec.jobId), submitterOf(spec)));
  const tag = attemptTag(spec);
  return parseIdComment(stdout).find((j) => j.comment === tag)?.id;
}

/**
 * Submit the attempt and return its Slurm job id; an attempt already in Slurm is
 * returned instead of submitted again. Transient failures are retried with backoff,
 * looking for a submission that got through before each retry.
 */
export function submitOnce(
  runner: SlurmRunner,
  spec: BatchJobSpec,
  s: SubmitSettings,
  signal?: AbortSignal,
): Promise<string> {
  return submitAttemptOnce(spec, {
    command: 'sbatch',
    name: 'slurm',
    idFile: LRMS_FILES.slurmId,
    markerFile: LRMS_FILES.submitting,
    mark: attemptTag(spec),
    attempts: s.submitAttempts,
    backoffMs: s.backoffMs,
    log: s.log,
    recorded: () => readJobIdFile(spec.lrmsDir, LRMS_FILES.slurmId),
    find: () => findLost(runner, spec, s),
    files: { script: LRMS_FILES.script, scriptText: batchScript(spec, s), wrapper: LRMS_FILES.wrapper },
    wrapperPath: s.wrapperPath,
    accounts: s.accounts,
    switchUser: s.switchUser,
    runner,
    args: [...sbatchArgs(spec, s), `${spec.lrmsDir}/${LRMS_FILES.script}`],
    parse: parseJobId,
    signal,
  });
}
