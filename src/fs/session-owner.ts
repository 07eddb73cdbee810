/**
 * Who owns what the service creates in a session directory. A job under a local account
 * (docs/security.md) owns its session directory; everything the service puts there for
 * it (uploads through the REST interface, staged inputs, directories made on the way)
 * is given to that owner, so the job can use and remove it like its own files. The
 * owner is read from the verified session directory itself, never from a path the job
 * controls: only root can change a directory's owner, so the job cannot choose it.
 *
 * Nothing changes when the service runs as an ordinary user (it cannot give files away,
 * and its jobs run as itself) or when the directory is the service's own.
 */
import { constants as C, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

export interface SessionOwner {
  readonly uid: number;
  readonly gid: number;
}

const self = (): number => process.geteuid?.() ?? -1;

/** The owner new entries below a directory with stats `s` get; undefined: leave them as created. */
export function ownerToGive(s: Pick<Stats, 'uid' | 'gid'>): SessionOwner | undefined {
  return self() === 0 && s.uid !== 0 ? { uid: s.uid, gid: s.gid } : undefined;
}

/** Gives the open entry `fh` (made by the service just now) to `owner`. */
export async function giveHandle(fh: FileHandle, owner: SessionOwner | undefined): Promise<void> {
  if (owner !== undefined) await fh.chown(owner.uid, owner.gid);
}

/**
 * Runs `fn` on the regular file at `path` (a `/proc/self/fd/<dir>/<name>` path, final
 * component not followed) when it is one with a single name; false if it is not. A job that
 * swapped it for a symbolic link or a hard link to a file it does not own (the password
 * database, say) finds that file left alone: chown and chmod by path would follow the link.
 */
async function onOwnFile(path: string, fn: (fh: FileHandle) => Promise<void>): Promise<boolean> {
  const fh = await open(path, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    const s = await fh.stat();
    if (!s.isFile() || s.nlink !== 1) return false;
    await fn(fh);
    return true;
  } finally {
    await fh.close();
  }
}

/** Gives the regular file at `path` (see onOwnFile) to `owner`; anything else is left alone. */
export async function giveFile(path: string, owner: SessionOwner | undefined): Promise<void> {
  if (owner === undefined) return;
  await onOwnFile(path, (fh) => fh.chown(owner.uid, owner.gid));
}

/**
 * Sets the mode of the regular file at `path` (see onOwnFile), which the service wrote
 * just now in a directory the job's account can write to. False when it is no longer a
 * plain file of one name (a link, a directory): it was replaced behind the service's back.
 */
export async function setFileMode(path: string, mode: number): Promise<boolean> {
  try {
    return await onOwnFile(path, (fh) => fh.chmod(mode));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') return false; // a symbolic link now
    throw e;
  }
}
