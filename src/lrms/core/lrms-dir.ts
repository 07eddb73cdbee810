/**
 * Preparing a job's lrms directory for a batch system whose job runs as the job's
 * account: the job wrapper placed in it (a hard link, a copy across file systems), and
 * the command prefix that submits as that account (`runuser -u ACCOUNT --` from a root
 * service), so that the batch system runs the job as the account.
 */
import { copyFile, link, rm } from 'node:fs/promises';

export async function placeWrapper(from: string, to: string): Promise<void> {
  await rm(to, { force: true });
  // A hard link costs nothing per job; another file system needs a copy.
  await link(from, to).catch(() => copyFile(from, to));
}

export function switchUserPrefix(how: 'runuser', account: string | undefined): string[] {
  if (account === undefined) return [];
  return [how, '-u', account, '--'];
}
