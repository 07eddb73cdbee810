/**
 * A job's session directory held open for its downloads, once per job instead of once
 * per file. Taking it per file cost a lease (the service's verified open of the
 * directory: open, fstat, close) and the root's own open (open, fstat, close) for every
 * input: six calls through the thread pool, most of what the service spent placing a
 * small file (docs/data-staging.md, "Small files, third pass").
 *
 * Held only while the job holds its stage-in slot (inJobSlot), never while it waits for
 * one or for its client's uploads: at most `maxJobsStagingIn` leases, where each file's
 * download held one before (up to `maxTransfersPerJob` per job). What is reached through
 * it is as before: every path below it is opened one component at a time without
 * following a link (src/fs/safe-fs.ts). The session directory cannot be moved by the job
 * (the sessions folder is the service's), so the descriptor names the job's directory
 * for as long as it is held; one removed meanwhile (the job cleaned or killed, its
 * staging cancelled) takes no new file (a directory with no link takes no entry).
 */
import { openSessionRootWithStat, type SessionRoot } from '../fs/safe-fs.js';
import { withSession, type SessionRef } from './types.js';

/**
 * Runs `work` with the job's session directory open. When the lease or the open fails
 * (the directory replaced or gone), `work` runs with undefined: each file then takes the
 * session itself and fails with the reason it finds, as it did before.
 */
export async function holdingSession(
  ref: SessionRef,
  work: (root: SessionRoot | undefined) => Promise<void>,
): Promise<void> {
  let ran = false;
  try {
    await withSession(ref, async (dir) => {
      const root = await openSessionRootWithStat(dir).catch(() => undefined);
      ran = true;
      try {
        await work(root);
      } finally {
        await root?.h.close().catch(() => undefined);
      }
    });
  } catch (e) {
    if (ran) throw e;
    await work(undefined);
  }
}
