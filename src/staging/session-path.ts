/**
 * File names from job descriptions, confined to the session directory. A name may
 * not climb out (`..`), and no component of a path the service reads or writes may
 * be a symbolic link: a job runs as the user and could otherwise plant
 * `out -> /etc/...` and have the service upload (or overwrite) a file it must not.
 * Every access goes through src/fs/safe-fs.ts (directory descriptors, one component
 * at a time, never following a link); this module turns its answers into staging's.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { stagingError } from './staging-error.js';
import { isCeError } from '../errors/ce-error.js';
import {
  inDir,
  listFiles,
  lstatIn,
  lstatPath,
  openDirChainWithStat,
  openForRead,
  type OpenedDir,
  type Opened,
  type SessionRoot,
} from '../fs/safe-fs.js';
import { ownerToGive, type SessionOwner } from '../fs/session-owner.js';

export interface SessionName {
  /** Relative POSIX path without leading or trailing '/'; '' = the session directory itself. */
  readonly rel: string;
  /** The name ended in '/' (or was '/'): a directory tree. */
  readonly dir: boolean;
}

export function parseSessionName(name: string): SessionName {
  // Control characters would break the line-based control files and logs.
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name)) throw badName(name);
  const dir = name.endsWith('/');
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw badName(name);
  return { rel: parts.join('/'), dir: dir || parts.length === 0 };
}

/**
 * lstat of a session path reached through directory descriptors (src/fs/safe-fs.ts);
 * undefined if absent (or a component on the way is not a directory); a symbolic link
 * anywhere on it is refused.
 */
export async function lstatInSession(sessionDir: string, rel: string): Promise<Stats | undefined> {
  try {
    return await lstatPath(sessionDir, rel === '' ? [] : rel.split('/'));
  } catch (e) {
    throw staged(e, rel);
  }
}

/** The regular files of the directory tree `rel` (paths relative to it), never through a link. */
export async function listSessionTree(sessionDir: string, rel: string): Promise<string[]> {
  try {
    return await listFiles(sessionDir, rel === '' ? [] : rel.split('/'));
  } catch (e) {
    if (isCeError(e) && e.code === 'CE_ERR_SESSION_NOT_FOUND')
      throw stagingError('CE_ERR_STAGING_LOCAL_IO', `${rel}/: no such directory in the session directory`);
    throw staged(e, rel);
  }
}

/** Where a staged input is written: a path valid only until `close()`. */
export interface WriteTarget {
  /** `/proc/self/fd/<parent>/<name>`: the parent directory is held open, not looked up again. */
  readonly path: string;
  /** Who the placed file goes to (the session's local account; session-owner.ts); undefined: nobody else. */
  readonly owner: SessionOwner | undefined;
  /**
   * What to report for `e`, a failed placement of the file at `path` (a rename or an
   * exclusive create there): a directory found in the way is named as such (a target
   * opened with `lookFirst` false was not looked at before), anything else is `e`.
   */
  placementError(e: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Opens the parent directory of `rel` for writing, below the session directory's path or
 * below a root the caller holds open (a job's downloads: session-hold.ts), creating missing
 * directories (mode 0777 less umask), one component at a time without following links
 * (src/fs/safe-fs.ts): a job swapping a directory for a link meanwhile cannot redirect the
 * write. Refuses a parent that is a link or a file, and a directory at `rel`: before the
 * download, or with `lookFirst` false (a file placed by one rename, which cannot replace a
 * directory: EISDIR) when the placement fails (`placementError`), which saves a call per
 * file (an lstat that fails with ENOENT for every new input: a trip through the thread
 * pool and an error object).
 */
export async function openWriteTarget(
  session: string | SessionRoot,
  rel: string,
  o: { readonly lookFirst?: boolean } = {},
): Promise<WriteTarget> {
  if (rel === '') throw badName('/');
  const parts = rel.split('/');
  const name = parts.pop() as string;
  let opened: OpenedDir;
  try {
    opened = await openDirChainWithStat(session, parts, true, 0o777);
  } catch (e) {
    if (isCeError(e) && (e.code === 'CE_ERR_SESSION_SYMLINK' || e.code === 'CE_ERR_SESSION_PARENT_NOT_DIRECTORY'))
      throw unsafe(rel);
    throw ioError(e, rel);
  }
  const parent = opened.dir;
  const inTheWay = async (): Promise<boolean> => (await lstatIn(parent, name))?.isDirectory() === true;
  let owner: SessionOwner | undefined;
  let blocked: boolean;
  try {
    blocked = o.lookFirst !== false && (await inTheWay());
    if (!blocked) owner = ownerToGive(await opened.stat());
  } catch (e) {
    await opened.close();
    throw ioError(e, rel);
  }
  if (blocked) {
    await opened.close();
    throw directoryInTheWay(rel);
  }
  return {
    path: inDir(parent, name),
    owner,
    placementError: async (e) => {
      const c = (e as NodeJS.ErrnoException | undefined)?.code;
      if (c !== 'EISDIR' && c !== 'EEXIST' && c !== 'ENOTEMPTY') return e;
      return (await inTheWay().catch(() => false)) ? directoryInTheWay(rel) : e;
    },
    close: () => opened.close(),
  };
}

function directoryInTheWay(rel: string): Error {
  return stagingError('CE_ERR_STAGING_UNSAFE_PATH', `${rel}: a directory is in the way`);
}

/**
 * Open a regular session file for reading, never through a symlink: one component at
 * a time through directory descriptors (src/fs/safe-fs.ts), so a directory swapped for a link
 * after any check cannot redirect the read.
 */
export async function openSessionFile(sessionDir: string, rel: string): Promise<{ handle: FileHandle; size: number }> {
  let o: Opened;
  try {
    o = await openForRead(sessionDir, rel === '' ? [] : rel.split('/'));
  } catch (e) {
    if (isCeError(e) && e.code === 'CE_ERR_SESSION_NOT_FOUND')
      throw stagingError('CE_ERR_STAGING_LOCAL_IO', `${rel}: no such file in the session directory`);
    if (isCeError(e) && e.code === 'CE_ERR_SESSION_SYMLINK') throw unsafe(rel);
    throw ioError(e, rel);
  }
  if (o.kind !== 'file') {
    await o.handle.close();
    throw unsafe(rel);
  }
  return { handle: o.handle, size: o.stat.size };
}

/** A session-directory error as data staging reports it. */
function staged(e: unknown, rel: string): Error {
  return isCeError(e) && e.code === 'CE_ERR_SESSION_SYMLINK' ? unsafe(rel) : ioError(e, rel);
}

function badName(name: string): Error {
  return stagingError(
    'CE_ERR_STAGING_BAD_NAME',
    `'${name.replace(/[^\x20-\x7e]/g, '?').slice(0, 200)}' is not a valid file name inside the session directory`,
  );
}

function unsafe(rel: string): Error {
  return stagingError('CE_ERR_STAGING_UNSAFE_PATH', `${rel}: symbolic link or not a regular file`);
}

export function ioError(e: unknown, what: string): Error {
  const code = (e as NodeJS.ErrnoException).code ?? 'error';
  return stagingError('CE_ERR_STAGING_LOCAL_IO', `${what}: local file system error (${code})`, { cause: e });
}
