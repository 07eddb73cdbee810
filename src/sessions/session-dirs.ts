/**
 * The sessions folder and the one directory in it each job was given.
 *
 * A job owns its session directory and, running as a user who can write the
 * sessions folder, can rename that directory away and put a link (to another job's
 * session, to the state directory) or another directory in its place. Everything the
 * service does to a session therefore goes through this module:
 *
 *  - the sessions folder is opened once at start and kept (`folder`): names are
 *    resolved relative to that descriptor (openat semantics, src/fs/safe-fs.ts `inDir`), so
 *    renaming or replacing the folder's path later changes nothing;
 *  - a session directory is made here (`create`) and its identity (device and inode)
 *    returned, to be stored with the job;
 *  - it is opened with O_DIRECTORY|O_NOFOLLOW (a link in its place is refused) and
 *    its identity compared with the stored one (another directory in its place is
 *    refused): CE_ERR_SESSION_REPLACED;
 *  - work is done inside a lease (`withRoot`): the callback gets the confined path
 *    `/proc/self/fd/<fd>/.` of the verified directory, valid only until it returns
 *    (the descriptor number is reused afterwards);
 *  - removal (`remove`) never follows a link: a link in the job's place is unlinked,
 *    not its target; a foreign directory in its place is left alone (it may be
 *    another job's, moved there); the job's own directory, wherever in the folder the job renamed it,
 *    is found by its identity and emptied through descriptors.
 *
 * Jobs stored before identities were recorded (identity null) get the link refusal
 * and link-safe removal, but a replacement by another real directory cannot be told.
 */
import { constants as C, lchownSync, lstatSync, mkdirSync, rmdirSync, statfsSync, type BigIntStats } from 'node:fs';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ceError } from '../errors/ce-error.js';
import { DIR_FLAGS, dirPath, emptyDir, inDir, mapFsError, rmdirIn, unlinkIn } from '../fs/safe-fs.js';
import { sweepUploadDebris, type DebrisSweepResult } from './session-debris.js';
import { Semaphore } from '../staging/semaphore.js';
import type { SessionOwner } from '../fs/session-owner.js';

/** `<dev>:<ino>` of a directory, exact (from bigint stats). */
export type SessionIdentity = string;

export function identityOf(s: BigIntStats): SessionIdentity {
  return `${s.dev}:${s.ino}`;
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

export interface RemoveReport {
  /** What was at `<id>`: the job's directory, a link, a foreign directory, a file, or nothing. */
  readonly found: 'own' | 'link' | 'foreign' | 'other' | 'none';
  /** Names of the job's renamed directory found elsewhere in the folder and removed. */
  readonly leftovers: readonly string[];
  /** A directory that is not the job's was found at `<id>` and left in place. */
  readonly keptForeign: boolean;
}

/**
 * Most session directories held open at once by leases (`withRoot`, `check`). Each lease
 * is a descriptor; without a bound, 30,000 jobs starting their stage-in together opened
 * 30,000 and the process ran out (EMFILE for every user). Over the bound a lease waits,
 * in order, for one to end; leases are short (one operation), never held across a wait.
 */
export const MAX_OPEN_SESSION_ROOTS = 512;

export class SessionDirs {
  readonly #folder: FileHandle;
  readonly #stop = new AbortController();
  /** FIFO: a lease waits in order, none is dropped. */
  readonly #leases = new Semaphore(MAX_OPEN_SESSION_ROOTS);
  #sweep: Promise<unknown> | undefined;
  /** Path of the sessions folder as configured (for the batch backend: jobs run there). */
  readonly path: string;

  private constructor(path: string, folder: FileHandle) {
    this.path = path;
    this.#folder = folder;
  }

  /** Opens the sessions folder (as configured, an administrator's link is followed) and keeps it. */
  static async open(path: string): Promise<SessionDirs> {
    return new SessionDirs(path, await open(path, C.O_RDONLY | C.O_DIRECTORY));
  }

  /** Stops a running sweep and waits for it (it uses the folder descriptor), then closes. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#sweep;
    await this.#folder.close();
  }

  /**
   * Removes upload temporaries a crash left behind (session-debris.ts), in the
   * background: the caller does not wait, the listener is not delayed.
   */
  sweepDebrisInBackground(before: number, report: (r: DebrisSweepResult | Error) => void): void {
    this.#sweep = sweepUploadDebris(this.#folder, { before, signal: this.#stop.signal }).then(report, (e: unknown) =>
      report(e instanceof Error ? e : new Error(String(e))),
    );
  }

  /** The session directory's path, for the batch backend only (the job runs there). */
  pathOf(id: string): string {
    return join(this.path, id);
  }

  /** Free and total bytes of the file system holding the sessions. */
  space(): { totalBytes: number; freeBytes: number } {
    const s = statfsSync(dirPath(this.#folder));
    return { totalBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize };
  }

  /**
   * Makes the session directory of a new job (mode 0700) and returns its identity;
   * with `owner` (the job's local account, docs/security.md) the directory is the
   * account's, and what the service later creates in it goes to the account too
   * (session-owner.ts). Synchronous: submission makes many at once (job-service.ts says why).
   */
  createSync(id: string, owner?: SessionOwner): SessionIdentity {
    const path = inDir(this.#folder, id);
    mkdirSync(path, { mode: 0o700 });
    // Just made, empty, in the service's folder: lchown changes this directory only.
    if (owner !== undefined) lchownSync(path, owner.uid, owner.gid);
    return identityOf(lstatSync(path, { bigint: true }));
  }

  /** Undo of `createSync` when the submission did not commit: the directory is still empty. */
  removeCreatedSync(id: string): void {
    try {
      rmdirSync(inDir(this.#folder, id));
    } catch {
      // not there or not empty: the job's clean (or nobody) handles it
    }
  }

  /**
   * Opens the job's session directory, verified: CE_ERR_SESSION_NOT_FOUND when nothing
   * is there, CE_ERR_SESSION_REPLACED when a link, a file or another directory is.
   * The caller closes the handle.
   */
  async openRoot(id: string, identity: SessionIdentity | null): Promise<FileHandle> {
    let h: FileHandle;
    try {
      h = await open(inDir(this.#folder, id), DIR_FLAGS);
    } catch (e) {
      const c = code(e);
      if (c === 'ENOENT') throw ceError('CE_ERR_SESSION_NOT_FOUND');
      if (c === 'ELOOP' || c === 'ENOTDIR')
        throw ceError('CE_ERR_SESSION_REPLACED', `The session directory of job ${id} was replaced by a link or a file`);
      return mapFsError(e); // e.g. the job made it unreadable: 403
    }
    if (identity !== null && identityOf(await h.stat({ bigint: true })) !== identity) {
      await h.close();
      throw ceError('CE_ERR_SESSION_REPLACED', `The session directory of job ${id} was replaced by another directory`);
    }
    return h;
  }

  /**
   * Runs `fn` with the confined path of the job's verified session directory. The path
   * names the directory through a descriptor held until `fn` settles: it must not be
   * kept or used after that.
   */
  withRoot<T>(id: string, identity: SessionIdentity | null, fn: (dir: string) => Promise<T>): Promise<T> {
    return this.#leases.with(async () => {
      const h = await this.openRoot(id, identity);
      try {
        return await fn(`${dirPath(h)}/.`);
      } finally {
        await h.close();
      }
    });
  }

  /** Throws as `openRoot` does when the session directory is not the job's. */
  async check(id: string, identity: SessionIdentity | null): Promise<void> {
    await this.withRoot(id, identity, async () => undefined);
  }

  /**
   * Removes the job's session directory and what the job left of it in the folder,
   * never anything through a link and never another job's directory (see the top).
   */
  async remove(
    id: string,
    identity: SessionIdentity | null,
    o: { readonly findRenamed?: boolean } = {},
  ): Promise<RemoveReport> {
    const s = await lstatBig(inDir(this.#folder, id));
    let found: RemoveReport['found'] = 'none';
    let keptForeign = false;
    if (s !== undefined) {
      if (s.isSymbolicLink()) found = 'link';
      else if (!s.isDirectory()) found = 'other';
      else found = identity === null || identityOf(s) === identity ? 'own' : 'foreign';
      if (found === 'link' || found === 'other') await unlinkIn(this.#folder, id);
      else if (found === 'own') {
        const removed = await this.#removeVerified(id, identity ?? identityOf(s));
        if (!removed) found = 'foreign'; // swapped between the lstat and the open
      }
      // Possibly another job's directory the job moved here: not ours to delete.
      keptForeign = found === 'foreign';
    }
    // The search reads the whole folder: skipped when the directory was where it belongs,
    // and when the caller knows it was removed before (a wiped job's final clean).
    const leftovers =
      found === 'own' || identity === null || o.findRenamed === false ? [] : await this.#removeRenamed(id, identity);
    return { found, leftovers, keptForeign };
  }

  /**
   * The job's directory renamed to `<id><anything>` (e.g. `<id>.moved`): found by its
   * identity, so another job's directory the job renamed there is never touched. Only
   * run when the directory is missing from its place, which a job cannot do to
   * itself by accident.
   */
  async #removeRenamed(id: string, identity: SessionIdentity): Promise<string[]> {
    const out: string[] = [];
    const names = await readdir(dirPath(this.#folder));
    for (const n of names) {
      if (n === id || !n.startsWith(id)) continue;
      const s = await lstatBig(inDir(this.#folder, n));
      if (s === undefined || !s.isDirectory() || identityOf(s) !== identity) continue;
      if (await this.#removeVerified(n, identity)) out.push(n);
    }
    return out;
  }

  /** Opens `name` without following links, checks its identity on the descriptor, empties it, removes it. */
  async #removeVerified(name: string, identity: SessionIdentity): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      let h: FileHandle;
      try {
        h = await open(inDir(this.#folder, name), DIR_FLAGS);
      } catch (e) {
        const c = code(e);
        if (c === 'ENOENT' || c === 'ELOOP' || c === 'ENOTDIR') return false;
        throw e;
      }
      try {
        if (identityOf(await h.stat({ bigint: true })) !== identity) return false;
        await emptyDir(h);
      } finally {
        await h.close();
      }
      if (await rmdirIn(this.#folder, name)) return true;
    }
    throw ceError('CE_ERR_SESSION_BUSY');
  }
}

async function lstatBig(p: string): Promise<BigIntStats | undefined> {
  try {
    return await lstat(p, { bigint: true });
  } catch (e) {
    if (code(e) === 'ENOENT') return undefined;
    throw e;
  }
}
