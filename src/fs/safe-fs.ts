/**
 * File-system access inside a session directory that never follows a symbolic link.
 *
 * The job owns its session directory and may create symlinks in it (to `/etc`, to
 * another user's files, ...). Checking paths first and opening them afterwards would
 * race with a job that swaps a directory for a link in between, so every operation
 * here is relative to an open directory descriptor, one component at a time, the way
 * openat(2) works: `/proc/self/fd/<dirfd>/<name>` resolves `<name>` inside the
 * directory that descriptor holds (the magic link is followed, `<name>` is the final
 * component and gets O_NOFOLLOW / lstat semantics). Each intermediate directory is
 * opened with O_DIRECTORY|O_NOFOLLOW, so a link anywhere on the path fails instead
 * of being followed. Linux only (as the rest of the service).
 *
 * Invariant: nothing outside the session directory is ever opened, listed, written,
 * created or removed through a path from a request or a job description, whatever the
 * job does concurrently. The one implementation for every reader and writer of session
 * directories: the REST session files (src/sessions) and data staging (src/staging).
 */
import { randomBytes } from 'node:crypto';
import { constants as C, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { ceError, isCeError } from '../errors/ce-error.js';
import { giveHandle, ownerToGive, type SessionOwner } from './session-owner.js';

export const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
/** O_NONBLOCK: opening a FIFO the job made must not hang the request. */
const READ_FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK;

/** Path of the directory open as `dir` (to list it, or the file system holding it). */
export function dirPath(dir: { readonly fd: number }): string {
  return `/proc/self/fd/${dir.fd}`;
}

/** Path of `name` inside the directory open as `dir` (openat semantics, see above). */
export function inDir(dir: FileHandle, name: string): string {
  return `${dirPath(dir)}/${name}`;
}

export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export function kindOf(s: Stats): EntryKind {
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isFile()) return 'file';
  if (s.isDirectory()) return 'dir';
  return 'other';
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Maps errno values every operation shares to client errors; rethrows the rest. ENOTDIR
 * is "not found" like ENOENT: a path whose directory became something else (a job swaps
 * entries of its own directory while the service works in it) names nothing there.
 */
export function mapFsError(e: unknown): never {
  switch (code(e)) {
    case 'ENOENT':
    case 'ENOTDIR':
      throw ceError('CE_ERR_SESSION_NOT_FOUND');
    case 'EACCES':
    case 'EPERM':
      throw ceError('CE_ERR_SESSION_PERMISSION_DENIED');
    case 'ENOSPC':
    case 'EDQUOT':
      throw ceError('CE_ERR_SESSION_NO_SPACE');
    case 'ENAMETOOLONG':
      throw ceError('CE_ERR_SESSION_BAD_PATH', 'Malformed session path: path too long');
    default:
      throw e;
  }
}

/** The names in the open directory `dir`. */
export async function namesIn(dir: FileHandle): Promise<string[]> {
  try {
    return await readdir(dirPath(dir));
  } catch (e) {
    return mapFsError(e);
  }
}

export async function lstatIn(dir: FileHandle, name: string): Promise<Stats | undefined> {
  try {
    return await lstat(inDir(dir, name));
  } catch (e) {
    if (code(e) === 'ENOENT') return undefined;
    return mapFsError(e);
  }
}

/**
 * A directory held open after it was removed (its link count is 0 on Linux file systems):
 * it still lists, empty, but names nothing any more. A session removed while a request
 * holds its lease is "not found", not an empty folder.
 */
export function removedDir(s: { readonly nlink: number | bigint }): boolean {
  return Number(s.nlink) === 0;
}

/**
 * The session directory itself. `sessionDir` is the confined path of a session lease
 * (session-dirs.ts: `/proc/self/fd/<fd>/.`, the verified directory the job was given),
 * so following it here follows nothing the job controls. Removed since the lease was
 * taken (the job cleaned or wiped meanwhile): CE_ERR_SESSION_NOT_FOUND.
 */
export async function openSessionRoot(sessionDir: string): Promise<FileHandle> {
  return (await openSessionRootWithStat(sessionDir)).h;
}

/** The session directory held open (openSessionRoot) with its status as it was opened. */
export interface SessionRoot {
  readonly h: FileHandle;
  readonly st: Stats;
}

/** openSessionRoot, with the status it looked at (the caller needs no second fstat of it). */
export async function openSessionRootWithStat(sessionDir: string): Promise<SessionRoot> {
  let h: FileHandle;
  try {
    h = await open(sessionDir, C.O_RDONLY | C.O_DIRECTORY);
  } catch (e) {
    return mapFsError(e);
  }
  const st = await h.stat().catch(async (e: unknown) => {
    await h.close();
    throw e;
  });
  if (removedDir(st)) {
    await h.close();
    throw ceError('CE_ERR_SESSION_NOT_FOUND');
  }
  return { h, st };
}

/**
 * Opens the directory `segs` below the session directory, one component at a time
 * without following links. With `create`, missing directories are made (mode 0700),
 * owned by the session directory's owner (session-owner.ts).
 * Errors: a link on the way is 403 CE_ERR_SESSION_SYMLINK; a missing component 404
 * (or, with `create`, a file in the way 409 CE_ERR_SESSION_PARENT_NOT_DIRECTORY).
 * The caller closes the returned handle.
 */
export async function openDirChain(
  sessionDir: string,
  segs: readonly string[],
  create = false,
  mode = 0o700,
): Promise<FileHandle> {
  return (await openDirChainWithStat(sessionDir, segs, create, mode)).dir;
}

/** A directory opened by openDirChainWithStat: `close` closes it unless it is a root the caller holds. */
export interface OpenedDir {
  readonly dir: FileHandle;
  /** Its status: the session directory's as it was opened, a directory below it looked at when asked. */
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

/**
 * openDirChain from the session directory's path, or from a root the caller holds open
 * (`SessionRoot`: a job's transfers take it once, not per file; it is not closed here),
 * with the opened directory's status on demand: the session directory's is the one
 * taken as it was opened (no second fstat, a call through the thread pool each).
 */
export async function openDirChainWithStat(
  from: string | SessionRoot,
  segs: readonly string[],
  create = false,
  mode = 0o700,
): Promise<OpenedDir> {
  const held = typeof from !== 'string';
  const root = held ? from : await openSessionRootWithStat(from);
  let cur = root.h;
  const release = (h: FileHandle): Promise<void> => (h === root.h && held ? Promise.resolve() : h.close());
  try {
    const owner = create && segs.length > 0 ? ownerToGive(root.st) : undefined;
    for (const seg of segs) {
      const next = await openChild(cur, seg, create, mode, owner);
      await release(cur);
      cur = next;
    }
  } catch (e) {
    await release(cur).catch(() => undefined);
    throw e;
  }
  const dir = cur;
  return {
    dir,
    stat: () => (dir === root.h ? Promise.resolve(root.st) : dir.stat()),
    close: () => release(dir),
  };
}

async function openChild(
  dir: FileHandle,
  name: string,
  create: boolean,
  mode: number,
  owner?: SessionOwner,
): Promise<FileHandle> {
  let made = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const h = await open(inDir(dir, name), DIR_FLAGS);
      if (made)
        await giveHandle(h, owner).catch(async (e: unknown) => {
          await h.close();
          throw e;
        });
      return h;
    } catch (e) {
      const c = code(e);
      if (c === 'ENOENT' && create && attempt === 0) {
        try {
          await mkdir(inDir(dir, name), { mode });
          made = true;
        } catch (me) {
          if (code(me) !== 'EEXIST') mapFsError(me);
        }
        continue;
      }
      if (c === 'ENOTDIR' || c === 'ELOOP') {
        // O_DIRECTORY|O_NOFOLLOW on a link gives ENOTDIR or ELOOP: tell links from files.
        const s = await lstatIn(dir, name);
        if (s?.isSymbolicLink()) throw ceError('CE_ERR_SESSION_SYMLINK');
        if (create) throw ceError('CE_ERR_SESSION_PARENT_NOT_DIRECTORY');
        throw ceError('CE_ERR_SESSION_NOT_FOUND');
      }
      return mapFsError(e);
    }
  }
}

export type Opened = { readonly kind: 'file' | 'dir'; readonly handle: FileHandle; readonly stat: Stats };

/**
 * Opens `segs` for reading: a regular file or a directory. A link is 403; a missing
 * entry, and anything that is neither file nor directory (FIFO, socket, device), 404,
 * consistently with listings, which show only files and directories.
 */
export async function openForRead(sessionDir: string, segs: readonly string[]): Promise<Opened> {
  if (segs.length === 0) {
    const h = await openSessionRoot(sessionDir);
    return { kind: 'dir', handle: h, stat: await h.stat() };
  }
  const parent = await openDirChain(sessionDir, segs.slice(0, -1));
  const name = segs[segs.length - 1] as string;
  let h: FileHandle;
  let owner: SessionOwner | undefined;
  try {
    h = await open(inDir(parent, name), READ_FLAGS);
    owner = ownerToGive(await parent.stat());
  } catch (e) {
    const c = code(e);
    if (c === 'ELOOP') throw ceError('CE_ERR_SESSION_SYMLINK');
    if (c === 'ENXIO' || c === 'ENODEV') throw ceError('CE_ERR_SESSION_NOT_FOUND');
    return mapFsError(e);
  } finally {
    await parent.close();
  }
  const stat = await h.stat();
  // Under a local account the service reads for the job's owner only what the account
  // could read itself: its own files, or files anyone may read. A hard link the job made
  // to a file of root's is not served.
  if (owner !== undefined && stat.uid !== owner.uid && (stat.mode & 0o004) === 0) {
    await h.close();
    throw ceError('CE_ERR_SESSION_PERMISSION_DENIED', "The file is not readable by the job owner's local account");
  }
  const kind = kindOf(stat);
  if (kind === 'file' || (kind === 'dir' && !removedDir(stat))) return { kind, handle: h, stat };
  await h.close();
  throw ceError('CE_ERR_SESSION_NOT_FOUND');
}

/**
 * lstat of `segs` below the session directory, reaching it through directory
 * descriptors: undefined when absent or when a component on the way is not a
 * directory; a link anywhere, the last component included, is 403 CE_ERR_SESSION_SYMLINK.
 */
export async function lstatPath(sessionDir: string, segs: readonly string[]): Promise<Stats | undefined> {
  if (segs.length === 0) {
    const root = await openSessionRoot(sessionDir);
    try {
      return await root.stat();
    } finally {
      await root.close();
    }
  }
  let parent: FileHandle;
  try {
    parent = await openDirChain(sessionDir, segs.slice(0, -1));
  } catch (e) {
    if (isCeError(e) && e.code === 'CE_ERR_SESSION_NOT_FOUND') return undefined;
    throw e;
  }
  let s: Stats | undefined;
  try {
    s = await lstatIn(parent, segs[segs.length - 1] as string);
  } finally {
    await parent.close();
  }
  if (s?.isSymbolicLink()) throw ceError('CE_ERR_SESSION_SYMLINK');
  return s;
}

/**
 * The regular files of the directory tree `segs` (paths relative to it, unsorted),
 * walked through descriptors: directories are entered only as opened with
 * O_DIRECTORY|O_NOFOLLOW, links and special files are skipped, never followed. A link
 * on the way to `segs` is 403; `segs` missing or not a directory, 404.
 */
export async function listFiles(sessionDir: string, segs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: FileHandle, prefix: string, depth: number): Promise<void> => {
    if (depth >= MAX_REMOVE_DEPTH) throw ceError('CE_ERR_SESSION_TREE_TOO_DEEP');
    for (const n of await namesIn(dir)) {
      const s = await lstatIn(dir, n);
      if (s?.isFile()) out.push(prefix + n);
      else if (s?.isDirectory()) {
        let sub: FileHandle;
        try {
          sub = await open(inDir(dir, n), DIR_FLAGS);
        } catch (e) {
          // Gone or swapped for a link since the lstat: not part of the tree.
          if (code(e) === 'ENOENT' || code(e) === 'ENOTDIR' || code(e) === 'ELOOP') continue;
          return mapFsError(e);
        }
        try {
          await walk(sub, `${prefix}${n}/`, depth + 1);
        } finally {
          await sub.close();
        }
      }
    }
  };
  const top = await openDirChain(sessionDir, segs);
  try {
    await walk(top, '', 0);
  } finally {
    await top.close();
  }
  return out;
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How deep a tree walk (removal, listing) descends before giving up (a job can nest directories endlessly). */
export const MAX_REMOVE_DEPTH = 256;

/**
 * Removes `name` inside `parent`: a file or link is unlinked (a link is removed
 * itself, its target is never touched); a directory is emptied recursively through
 * descriptors and removed. Returns what was removed; 404 when absent, or when
 * `mustBeDir` (the path ended in '/') and it is not a directory.
 */
export async function removeEntry(parent: FileHandle, name: string, mustBeDir = false): Promise<EntryKind> {
  const s = await lstatIn(parent, name);
  if (!s) throw ceError('CE_ERR_SESSION_NOT_FOUND');
  const kind = kindOf(s);
  if (mustBeDir && kind !== 'dir') throw ceError('CE_ERR_SESSION_NOT_FOUND');
  if (kind === 'dir') await removeDir(parent, name, 0);
  else await unlinkIn(parent, name);
  return kind;
}

export async function unlinkIn(dir: FileHandle, name: string): Promise<void> {
  try {
    await unlink(inDir(dir, name));
  } catch (e) {
    if (code(e) === 'ENOENT') return;
    if (code(e) === 'EISDIR') throw ceError('CE_ERR_SESSION_BUSY');
    mapFsError(e);
  }
}

async function removeDir(parent: FileHandle, name: string, depth: number): Promise<void> {
  if (depth >= MAX_REMOVE_DEPTH) throw ceError('CE_ERR_SESSION_TREE_TOO_DEEP');
  for (let attempt = 0; attempt < 3; attempt++) {
    let dir: FileHandle;
    try {
      dir = await open(inDir(parent, name), DIR_FLAGS);
    } catch (e) {
      const c = code(e);
      if (c === 'ENOENT') return;
      // Swapped for a link (or file) since the lstat: remove that entry itself.
      if (c === 'ENOTDIR' || c === 'ELOOP') return unlinkIn(parent, name);
      return mapFsError(e);
    }
    try {
      await emptyDir(dir, depth);
    } finally {
      await dir.close();
    }
    if (await rmdirIn(parent, name)) return;
  }
  throw ceError('CE_ERR_SESSION_BUSY');
}

/**
 * Removes everything inside the open directory `dir` (at nesting `depth`), through
 * descriptors: links and files are unlinked, directories emptied and removed.
 */
export async function emptyDir(dir: FileHandle, depth = 0): Promise<void> {
  for (const n of await namesIn(dir)) {
    const s = await lstatIn(dir, n);
    if (!s) continue;
    if (s.isDirectory()) await removeDir(dir, n, depth + 1);
    else await unlinkIn(dir, n);
  }
}

/**
 * rmdir of `name` in `parent`: true when it is gone, false when it is not empty (the
 * job wrote meanwhile: empty it again). rmdir never removes anything but an empty
 * directory, so a swap of `name` meanwhile cannot make it delete files.
 */
export async function rmdirIn(parent: FileHandle, name: string): Promise<boolean> {
  try {
    await rmdir(inDir(parent, name));
    return true;
  } catch (e) {
    const c = code(e);
    if (c === 'ENOENT') return true;
    if (c === 'ENOTEMPTY' || c === 'EEXIST') return false;
    if (c === 'ENOTDIR') {
      await unlinkIn(parent, name);
      return true;
    }
    return mapFsError(e);
  }
}

/** O_EXCL with O_NOFOLLOW: a fresh file, never an entry (link, FIFO, file) the job put there first. */
const NEW_FILE_FLAGS = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NONBLOCK;

/**
 * Replaces `name` in the open directory `dir` with a new regular file holding `content`
 * (mode 0600, given to `owner`), for files the service writes on its own into a directory
 * the job owns. Whatever the job put at `name` (a link to a file of root's, a hard link, a
 * FIFO, a huge file) is never opened: the content goes into a fresh temporary file
 * (O_CREAT|O_EXCL|O_NOFOLLOW) that is then renamed over `name`, and rename replaces the
 * directory entry itself, never what a link points to. A directory at `name` is left alone
 * (CE_ERR_SESSION_BUSY).
 */
export async function replaceFileIn(
  dir: FileHandle,
  name: string,
  content: string | Buffer,
  owner: SessionOwner | undefined,
): Promise<void> {
  const tmp = `.${name}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await open(inDir(dir, tmp), NEW_FILE_FLAGS, 0o600);
    try {
      await giveHandle(fh, owner);
      await fh.writeFile(content);
    } finally {
      await fh.close();
    }
    await rename(inDir(dir, tmp), inDir(dir, name));
  } catch (e) {
    await unlink(inDir(dir, tmp)).catch(() => undefined);
    const c = code(e);
    if (c === 'EISDIR' || c === 'ENOTEMPTY' || c === 'EEXIST') throw ceError('CE_ERR_SESSION_BUSY');
    return mapFsError(e);
  }
}
