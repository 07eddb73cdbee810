/**
 * The job's log directory in its session (xRSL `gmlog`, ADL `LoggingDirectory`): the
 * service's own per-job files, copied where the job and its client find them. The ARC
 * client adds the directory to the job's outputs at submission, so `arcget` downloads it
 * with the session, and a failed job's `errors` comes back to the user.
 *
 * Written after each state change of a job that asked for one (the scheduler's state-change
 * hook, after the control `errors` file got its lines), before the step's effects run: so
 * the copy made on entering FINISHING is in place before stage-out keeps it and before the
 * client can see the final state. Files: `errors` (the state-change log), `local` (the job's
 * local description, as the `diagnose/local` item), `status`, `failed` (the failure reason,
 * once there is one) and `diag` (the batch system's accounting, once the job ran).
 *
 * The directory belongs to the job's account, which may plant anything there: every write
 * goes through src/fs/safe-fs.ts (no link followed on the way, each file a fresh one renamed
 * over the old entry, so a link, FIFO, hard link or huge file planted under a log name is
 * replaced, never opened). A job whose session directory was never made (killed before it
 * was looked at) gets none: the directory is not made for its logs alone.
 */
import { openDirChain, replaceFileIn } from '../fs/safe-fs.js';
import { ownerToGive } from '../fs/session-owner.js';
import type { SessionsPort } from '../engine/scheduler/ports.js';
import type { ControlDir } from '../store/control-dir.js';
import type { JobRecord } from '../store/job-record.js';
import { localFileText, statusFileText } from './activity.js';

/**
 * The most of one control file copied (its end: the latest lines). The `errors` log grows
 * with every state change and the batch system's messages; the copy is the service's
 * write into the job's quota, so it is bounded.
 */
export const MAX_GMLOG_FILE_BYTES = 1024 * 1024;

export interface GmlogSources {
  readonly control: Pick<ControlDir, 'read'>;
  readonly sessions: Pick<SessionsPort, 'withRoot' | 'unmadeView'>;
  /** The service URL the `local` file names as head node. */
  readonly serviceUrl: () => string;
}

/** The path segments of a log directory name (submission refused names leaving the session). */
export function gmlogSegments(logDir: string): string[] {
  return logDir.split('/').filter((s) => s !== '' && s !== '.');
}

function tailOf(b: Buffer): Buffer {
  return b.length > MAX_GMLOG_FILE_BYTES ? b.subarray(b.length - MAX_GMLOG_FILE_BYTES) : b;
}

/** The files of the log directory for the job as recorded in `j`. */
export async function gmlogFiles(s: GmlogSources, j: JobRecord): Promise<Map<string, string | Buffer>> {
  const [errors, diag] = await Promise.all([s.control.read(j.id, 'errors'), s.control.read(j.id, 'diag')]);
  const files = new Map<string, string | Buffer>([
    ['errors', tailOf(errors ?? Buffer.alloc(0))],
    ['local', localFileText(j, s.serviceUrl())],
    ['status', `${statusFileText(j)}\n`],
  ]);
  if (j.failureReason) files.set('failed', `${j.failureReason}\n`);
  if (diag) files.set('diag', tailOf(diag));
  return files;
}

/**
 * Writes the job's log directory, when it asked for one and its session directory exists.
 * Throws the CeError of safe-fs when the job's entries are in the way (a link named like
 * the directory, a file where a directory is wanted).
 */
export async function writeGmlog(s: GmlogSources, j: JobRecord): Promise<void> {
  const segs = gmlogSegments(j.description.logDir ?? '');
  if (segs.length === 0) return;
  if (s.sessions.unmadeView?.(j.id, j.sessionIdent) !== undefined) return;
  const files = await gmlogFiles(s, j);
  await s.sessions.withRoot(j.id, j.sessionIdent, async (root) => {
    const dir = await openDirChain(root, segs, true);
    try {
      const owner = ownerToGive(await dir.stat());
      for (const [name, content] of files) await replaceFileIn(dir, name, content, owner);
    } finally {
      await dir.close();
    }
  });
}
