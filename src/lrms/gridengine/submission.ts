/**
 * Handing one attempt to Grid Engine: its files written, qsub run as the job's account,
 * the job number recorded (`ge-id`); an attempt whose number is recorded is not submitted
 * again. The job wrapper claims the lrms directory, so a second Grid Engine job of the
 * attempt exits without running anything.
 */
import type { AccountResolver } from '../../accounts/resolve-account.js';
import type { BatchJobSpec } from '../backend.js';
import { prepareAttempt, switchUserPrefix } from '../core/lrms-dir.js';
import { ceError } from '../../errors/ce-error.js';
import { writeAtomic } from '../core/job-files.js';
import { GE_FILES, batchScript, parseJobNumber, readJobNumber, type ScriptSettings } from './job-files.js';
import type { GridEngineRunner } from './run-command.js';

export interface SubmitSettings extends ScriptSettings {
  readonly jobNamePrefix: string;
  /** Queue for jobs that name none; empty: Grid Engine chooses. */
  readonly defaultQueue: string;
  readonly wrapperPath: string;
  readonly switchUser: 'runuser';
  readonly accounts: Pick<AccountResolver, 'resolve'>;
}

/** The Grid Engine job name of an attempt: the prefix and the Ceres job id, in the letters Grid Engine takes. */
export function geJobName(prefix: string, spec: Pick<BatchJobSpec, 'jobId'>): string {
  return `${prefix}${spec.jobId}`.replace(/[^\w.-]/g, '_');
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

/** Submit the attempt and return its job number; an attempt whose number is recorded is returned instead. */
export async function submitOnce(runner: GridEngineRunner, spec: BatchJobSpec, s: SubmitSettings): Promise<string> {
  const recorded = await readJobNumber(spec.lrmsDir);
  if (recorded !== undefined) return recorded;
  await prepareAttempt(
    spec,
    { script: GE_FILES.script, scriptText: batchScript(spec, s), wrapper: GE_FILES.wrapper },
    s.wrapperPath,
    s.accounts,
  );
  try {
    // As the job's account (runuser), so that Grid Engine runs and accounts the job as it.
    const { stdout } = await runner.run('qsub', qsubArgs(spec, s), {
      prefix: switchUserPrefix(s.switchUser, spec.localAccount),
    });
    const id = parseJobNumber(stdout);
    if (id === undefined) throw new Error(`qsub answered no job number: ${JSON.stringify(stdout.slice(0, 200))}`);
    await writeAtomic(`${spec.lrmsDir}/${GE_FILES.id}`, `${id}\n`);
    return id;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw ceError('CE_ERR_LRMS_SUBMIT_FAILED', `qsub failed: ${msg.replace(/^qsub: /, '')}`, { cause: e });
  }
}
