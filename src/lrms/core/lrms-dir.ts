/**
 * Preparing a job's lrms directory for a batch system whose job runs as the job's
 * account: the job wrapper placed in it (a hard link, a copy across file systems), and
 * the command prefix that submits as that account (`runuser -u ACCOUNT --` from a root
 * service), so that the batch system runs the job as the account.
 */
import { chown, copyFile, link, mkdir, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname } from 'node:path';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import type { BatchJobSpec } from '../backend.js';
import { JOB_SCRIPT, writeAtomic } from './job-files.js';
import { jobScript } from './job-script.js';

export async function placeWrapper(from: string, to: string): Promise<void> {
  await rm(to, { force: true });
  // A hard link costs nothing per job; another file system needs a copy.
  await link(from, to).catch(() => copyFile(from, to));
}

export function switchUserPrefix(how: 'runuser', account: string | undefined): string[] {
  if (account === undefined) return [];
  return [how, '-u', account, '--'];
}

/**
 * The account the batch system sees as a job's submitter (as switchUserPrefix runs it):
 * the job's local account, or the service's own when it has none. A submission whose
 * answer was lost is looked for among this account's jobs only.
 */
export function submitterOf(spec: Pick<BatchJobSpec, 'localAccount'>): string {
  return spec.localAccount ?? userInfo().username;
}

/**
 * A job's lrms directory made before its submission: the way to it passable, not listable
 * (as the state directory's lrms folder); the directory itself private (handed to the
 * job's account by the backend when there is one). An existing one is kept: a submission
 * retried after a crash finds its records there.
 */
export async function makeLrmsDir(lrmsDir: string): Promise<void> {
  await mkdir(dirname(lrmsDir), { recursive: true, mode: 0o711 });
  await mkdir(lrmsDir, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
}

/** A batch backend's files of an attempt: its batch script (name and text) and the wrapper's name. */
export interface AttemptFiles {
  readonly script: string;
  readonly scriptText: string;
  readonly wrapper: string;
}

/**
 * Write what an attempt needs before it is submitted (job.sh, the batch script, the job
 * wrapper), and hand the lrms directory to the job's account when there is one: the
 * wrapper, running as the account, writes pid, status and diag there. The resolver
 * refuses an account that is root or below accounts.minUid (its own catalog code says
 * why): such a job is never handed to the batch system.
 */
export async function prepareAttempt(
  spec: BatchJobSpec,
  files: AttemptFiles,
  wrapperPath: string,
  accounts: Pick<AccountResolver, 'resolve'>,
): Promise<void> {
  await writeAtomic(`${spec.lrmsDir}/${JOB_SCRIPT}`, jobScript(spec));
  await writeAtomic(`${spec.lrmsDir}/${files.script}`, files.scriptText);
  await placeWrapper(wrapperPath, `${spec.lrmsDir}/${files.wrapper}`);
  if (spec.localAccount !== undefined) {
    const { uid, gid } = await accounts.resolve(spec.localAccount);
    await chown(spec.lrmsDir, uid, gid);
  }
}
