/**
 * Handing one attempt to a batch system exactly once, whatever crashes or times out on the
 * way. The lrms directory records the submission:
 *
 *   <id file> exists                 → submitted: that job
 *   <marker> exists, no id file      → an earlier submission may have got through with its
 *                                      answer lost (a crash, a timeout): `find` looks for it
 *                                      (by the id the job wrote itself when it started, or by
 *                                      the attempt's mark in the batch system's job list)
 *                                      before anything is submitted again
 *   neither                          → submit
 *
 * A transient failure (the controller down) is retried with backoff, looking for a
 * submission that got through before each retry; the job wrapper's claim of the lrms
 * directory stops whatever slips through anyway from running the job a second time.
 *
 * A kill while the submission waits (`signal`) withdraws it, but only where nothing of the
 * attempt can be in the batch system: before the first run of the command has started,
 * with no marker of an earlier life (whose command may still be under way). Otherwise the
 * submission goes on and the caller cancels what it returns.
 */
import { lstat, rm } from 'node:fs/promises';
import { ceError } from '../../errors/ce-error.js';
import type { BatchJobSpec } from '../backend.js';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import type { BackendLog } from './backend-log.js';
import { writeAtomic } from './job-files.js';
import { prepareAttempt, switchUserPrefix, type AttemptFiles } from './lrms-dir.js';
import { BatchCommandError, type CommandRunner } from './run-command.js';

export interface SubmitOnceSteps {
  /** The submission command, in messages (`sbatch`, `qsub`). */
  readonly command: string;
  /** Names the backend in log lines. */
  readonly name: string;
  /** Files of the lrms directory: the id once answered, the marker written before submitting (its text: the attempt's mark). */
  readonly idFile: string;
  readonly markerFile: string;
  readonly mark: string;
  readonly attempts: number;
  readonly backoffMs: number;
  readonly log?: BackendLog | undefined;
  /** The id recorded in `idFile`, if any. */
  recorded(): Promise<string | undefined>;
  /** The job of an earlier submission whose answer was lost (only asked while the marker exists). */
  find(): Promise<string | undefined>;
  /** The attempt's files, written before it is submitted (./lrms-dir.ts, prepareAttempt). */
  readonly files: AttemptFiles;
  readonly wrapperPath: string;
  readonly accounts: Pick<AccountResolver, 'resolve'>;
  /** The submission runs as the job's account (`runuser -u ACCOUNT --`), so that the batch system runs and accounts the job as it. */
  readonly switchUser: 'runuser';
  readonly runner: CommandRunner;
  /** The submission command's arguments. */
  readonly args: readonly string[];
  /** The id in the submission command's answer. */
  parse(stdout: string): string | undefined;
  /** Fires when the job is killed: withdraws a submission whose command has not started. */
  readonly signal?: AbortSignal | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

async function lookForEarlier(spec: BatchJobSpec, s: SubmitOnceSteps): Promise<string | undefined> {
  const recorded = await s.recorded();
  if (recorded) return recorded;
  return (await exists(`${spec.lrmsDir}/${s.markerFile}`)) ? await s.find() : undefined;
}

/** One run of the submission command (no retry of its own: the loop looks for a lost answer first). */
async function submitOne(
  spec: BatchJobSpec,
  s: SubmitOnceSteps,
  signal: AbortSignal | undefined,
  starting: () => Promise<void>,
): Promise<string> {
  const { stdout } = await s.runner.run(s.command, s.args, {
    prefix: switchUserPrefix(s.switchUser, spec.localAccount),
    attempts: 1,
    starting,
    ...(signal !== undefined ? { signal } : {}),
  });
  const id = s.parse(stdout);
  if (id === undefined)
    throw new BatchCommandError(`${s.command} answered no job id: ${JSON.stringify(stdout.slice(0, 200))}`, false);
  return id;
}

/**
 * Submit the attempt and return its id; an attempt already in the batch system is
 * returned (and recorded) instead of submitted again.
 */
export async function submitOnce(spec: BatchJobSpec, s: SubmitOnceSteps): Promise<string> {
  const record = async (id: string): Promise<string> => {
    await writeAtomic(`${spec.lrmsDir}/${s.idFile}`, `${id}\n`);
    return id;
  };
  const known = await lookForEarlier(spec, s).catch(() => undefined);
  if (known) return record(known);
  const marker = `${spec.lrmsDir}/${s.markerFile}`;
  // A marker of an earlier life whose job was not found: its command may still be under
  // way (a service killed during it leaves it running), so this attempt is not withdrawn.
  const signal = (await exists(marker)) ? undefined : s.signal;
  const withdrawn = (): Error =>
    ceError('CE_ERR_LRMS_SUBMIT_WITHDRAWN', `${s.command} was not run: the job was killed before its turn`);
  // A function, not a narrowed value: the signal fires while the code below awaits.
  const killed = (): boolean => signal?.aborted === true;
  if (killed()) throw withdrawn();
  await prepareAttempt(spec, s.files, s.wrapperPath, s.accounts);
  // Written in the command's slot, right before it starts: a job killed (or a service
  // killed) while it waits for its turn leaves no marker, so its submission can be withdrawn.
  const marking = (): Promise<void> => writeAtomic(marker, `${s.mark}\n`);
  let delay = s.backoffMs;
  for (let attempt = 1; ; attempt++) {
    try {
      // Only the first run can be withdrawn: a later one follows a run that may have got through.
      return await record(await submitOne(spec, s, attempt === 1 ? signal : undefined, marking));
    } catch (e) {
      if (attempt === 1 && killed() && e === signal?.reason) {
        // Taken out of the command queue before it started: nothing reached the batch system.
        await rm(marker, { force: true });
        throw withdrawn();
      }
      const err = e instanceof BatchCommandError ? e : new BatchCommandError(String(e), false);
      if (!err.transient || attempt >= s.attempts) {
        // Nothing of this attempt is in the batch system unless a timed-out answer was lost: keep the marker then.
        if (!err.timedOut) await rm(`${spec.lrmsDir}/${s.markerFile}`, { force: true });
        throw ceError(
          'CE_ERR_LRMS_SUBMIT_FAILED',
          `${s.command} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${err.message.replace(new RegExp(`^${s.command}: `), '')}`,
          { cause: e },
        );
      }
      s.log?.warn(
        { job: spec.jobId, attempt, retryInMs: delay, error: err.message },
        `${s.name}: ${s.command} failed, retrying`,
      );
      await sleep(delay);
      delay = Math.min(delay * 2, 30_000);
      // The failed call may have reached the controller (a timeout, a lost answer).
      const through = await s.find().catch(() => undefined);
      if (through) return record(through);
    }
  }
}
