/**
 * Handing one attempt to Slurm, exactly once. The lrms directory records the submission:
 *
 *   slurm-id exists                → submitted: that job
 *   slurm-submit exists, no id     → an earlier sbatch may have got through with its answer
 *                                    lost (crash, timeout): the job is looked for by its
 *                                    name and attempt tag, or by the id it wrote itself
 *                                    when it started (slurm-job), before submitting again
 *   neither                        → submit
 *
 * And whatever slipped through: the job wrapper claims the directory, so a second Slurm
 * job for the same attempt exits at once without running anything.
 */
import { chown, lstat, rm } from 'node:fs/promises';
import { ceError } from '../../errors/ce-error.js';
import type { BatchJobSpec } from '../backend.js';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import { JOB_SCRIPT, writeAtomic } from '../core/job-files.js';
import { jobScript } from '../core/job-script.js';
import { placeWrapper, switchUserPrefix } from '../core/lrms-dir.js';
import { batchScript, type ScriptSettings } from './batch-script.js';
import { LRMS_FILES, parseJobId, readJobIdFile } from './lrms-files.js';
import { SlurmCommandError, type SlurmRunner } from './run-command.js';
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

const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export { switchUserPrefix };

/** The Slurm job of this attempt, if an earlier submission got through. */
export async function findSubmitted(
  runner: SlurmRunner,
  spec: BatchJobSpec,
  s: SbatchSettings,
): Promise<string | undefined> {
  const recorded = await readJobIdFile(spec.lrmsDir, LRMS_FILES.slurmId);
  if (recorded) return recorded;
  if (!(await exists(`${spec.lrmsDir}/${LRMS_FILES.submitting}`))) return undefined;
  const started = await readJobIdFile(spec.lrmsDir, LRMS_FILES.started);
  if (started) return started;
  const { stdout } = await runner.run('squeue', squeueByNameArgs(jobName(s, spec.jobId)));
  const tag = attemptTag(spec);
  return parseIdComment(stdout).find((j) => j.comment === tag)?.id;
}

/** Write the attempt's files (job.sh, slurm.sh, the wrapper), owned so that the job's account can write its results. */
async function prepare(spec: BatchJobSpec, s: SubmitSettings): Promise<void> {
  await writeAtomic(`${spec.lrmsDir}/${JOB_SCRIPT}`, jobScript(spec));
  await writeAtomic(`${spec.lrmsDir}/${LRMS_FILES.script}`, batchScript(spec, s));
  await placeWrapper(s.wrapperPath, `${spec.lrmsDir}/${LRMS_FILES.wrapper}`);
  if (spec.localAccount !== undefined) {
    // The resolver refuses an account that is root or below accounts.minUid (its own
    // catalog code says why): such a job is never handed to Slurm.
    const { uid, gid } = await s.accounts.resolve(spec.localAccount);
    // The wrapper (running as the account) writes pid, status and diag here.
    await chown(spec.lrmsDir, uid, gid);
  }
}

/**
 * Submit the attempt and return its Slurm job id; an attempt already in Slurm is
 * returned instead of submitted again. Transient failures are retried with backoff,
 * looking for a submission that got through before each retry.
 */
export async function submitOnce(runner: SlurmRunner, spec: BatchJobSpec, s: SubmitSettings): Promise<string> {
  const known = await findSubmitted(runner, spec, s).catch(() => undefined);
  if (known) {
    await writeAtomic(`${spec.lrmsDir}/${LRMS_FILES.slurmId}`, `${known}\n`);
    return known;
  }
  await prepare(spec, s);
  await writeAtomic(`${spec.lrmsDir}/${LRMS_FILES.submitting}`, `${attemptTag(spec)}\n`);
  const args = [...sbatchArgs(spec, s), `${spec.lrmsDir}/${LRMS_FILES.script}`];
  const prefix = switchUserPrefix(s.switchUser, spec.localAccount);
  let delay = s.backoffMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await runner.run('sbatch', args, { prefix, attempts: 1 });
      const id = parseJobId(stdout);
      if (!id) throw new SlurmCommandError(`sbatch answered no job id: ${JSON.stringify(stdout.slice(0, 200))}`, false);
      await writeAtomic(`${spec.lrmsDir}/${LRMS_FILES.slurmId}`, `${id}\n`);
      return id;
    } catch (e) {
      const err = e instanceof SlurmCommandError ? e : new SlurmCommandError(String(e), false);
      if (!err.transient || attempt >= s.submitAttempts) {
        // Nothing of this attempt is in Slurm unless a timed-out answer was lost: keep the marker then.
        if (!err.timedOut) await rm(`${spec.lrmsDir}/${LRMS_FILES.submitting}`, { force: true });
        throw ceError(
          'CE_ERR_LRMS_SUBMIT_FAILED',
          `sbatch failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${err.message.replace(/^sbatch: /, '')}`,
          { cause: e },
        );
      }
      s.log?.warn({ job: spec.jobId, attempt, retryInMs: delay, error: err.message }, 'slurm: sbatch failed, retrying');
      await sleep(delay);
      delay = Math.min(delay * 2, 30_000);
      // The failed call may have reached slurmctld (a timeout, a lost answer).
      const through = await findSubmitted(runner, spec, s).catch(() => undefined);
      if (through) {
        await writeAtomic(`${spec.lrmsDir}/${LRMS_FILES.slurmId}`, `${through}\n`);
        return through;
      }
    }
  }
}
