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
 * Gives the regular file at `path` (a `/proc/self/fd/<dir>/<name>` path, final
 * component not followed) to `owner`: opened without following a link, and only when
 * it has one name. A job that swapped it for a hard link to a file it does not own
 * (the password database, say) finds that file left alone.
 */
export async function giveFile(path: string, owner: SessionOwner | undefined): Promise<void> {
  if (owner === undefined) return;
  const fh = await open(path, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    const s = await fh.stat();
    if (s.isFile() && s.nlink === 1) await fh.chown(owner.uid, owner.gid);
  } finally {
    await fh.close();
  }
}
