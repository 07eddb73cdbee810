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
 *  - a session directory is made here on the job's first use of it, not at
 *    submission (`#made`, below), and its identity (device and inode) stored with the
 *    job before anything is done in it;
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
 *
 * Made on first use: a 1,000-job submission spent about a third of its time in the
 * thousand mkdir and lstat calls (docs/performance.md), so submission stores
 * SESSION_NOT_MADE and the directory is made by whatever needs it first (an upload, a
 * listing, the job's preparation or its start). The rules that keep that safe:
 *
 *  - one making per job at a time in this process (`#making`), and the identity is
 *    stored by compare-and-set from SESSION_NOT_MADE before the directory is used, so
 *    two first uses get one directory and a removal in between wins (the directory just
 *    made is taken back);
 *  - removing a session never made stores SESSION_NEVER_MADE first: nothing makes it later;
 *  - something already at `<id>` when the directory is to be made is adopted only if it
 *    is a real, empty directory of the service's or of the job's account: what a kill -9
 *    between the mkdir and the fchown, or between the fchown and the stored identity,
 *    leaves (`#adoptable`). A link, a file, a third account's or a non-empty directory is
 *    refused (CE_ERR_SESSION_REPLACED) and left alone;
 *  - a stage-out of a job whose directory was never made (a job killed before it was
 *    looked at) does not make it: it reads an empty directory instead (`unmadeView`),
 *    so a store filled with such jobs does not cost a mkdir, a chown, a stored
 *    identity and a removal each.
 */
import { constants as C, lchownSync, lstatSync, mkdirSync, statfsSync, type BigIntStats } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, rmdir, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ceError } from '../errors/ce-error.js';
import { DIR_FLAGS, dirPath, emptyDir, inDir, mapFsError, namesIn, rmdirIn, unlinkIn } from '../fs/safe-fs.js';
import { sweepUploadDebris, type DebrisSweepResult } from './session-debris.js';
import { Semaphore } from '../staging/semaphore.js';
import type { SessionOwner } from '../fs/session-owner.js';

/** `<dev>:<ino>` of a directory, exact (from bigint stats). */
export type SessionIdentity = string;

export function identityOf(s: BigIntStats): SessionIdentity {
  return `${s.dev}:${s.ino}`;
}

/** Stored in place of an identity while the job's directory has not been made (see the top). */
export const SESSION_NOT_MADE = 'not-made';
/** Stored when a job's session was removed before it was made: it is never made after that. */
export const SESSION_NEVER_MADE = 'never-made';

/** What the stored identity says, apart from a real one. */
function unmade(identity: SessionIdentity | null): boolean {
  return identity === SESSION_NOT_MADE || identity === SESSION_NEVER_MADE;
}

/** Where the sessions' identities are stored (the job store), for making directories on first use. */
export interface SessionRecords {
  /** The job's stored identity, or undefined when the job is gone. */
  identity(id: string): SessionIdentity | null | undefined;
  /** Stores `to` only if `from` is still stored; false otherwise (or when the job is gone). */
  swapIdentity(id: string, from: SessionIdentity, to: SessionIdentity): boolean;
  /** The local account that owns the job's directory (docs/security.md); undefined: the service's. */
  owner(id: string): Promise<SessionOwner | undefined>;
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

export interface SessionDirsOptions {
  /**
   * Fault injection, for tests only (the service never sets it): awaited right after a
   * job's directory is made on its first use, before anything else is done with it. A
   * removal that began before this making can take the directory away in exactly that
   * window; a hook that removes it there makes the race happen every time.
   */
  readonly afterMake?: (id: string) => Promise<void>;
}

export class SessionDirs {
  readonly #folder: FileHandle;
  readonly #stop = new AbortController();
  /** FIFO: a lease waits in order, none is dropped. */
  readonly #leases = new Semaphore(MAX_OPEN_SESSION_ROOTS);
  readonly #records: SessionRecords | undefined;
  /** Directories being made, by job id: a second first use waits for the first. */
  readonly #making = new Map<string, Promise<SessionIdentity | null>>();
  /**
   * An empty directory that nothing can write: made, opened and removed at once, so only
   * this descriptor still names it and no entry can be created in it, by root either.
   * Undefined when it could not be made: a never-made session is then made for its
   * stage-out, as any first use.
   */
  readonly #empty: FileHandle | undefined;
  readonly #afterMake: SessionDirsOptions['afterMake'];
  #sweep: Promise<unknown> | undefined;
  /** Path of the sessions folder as configured (for the batch backend: jobs run there). */
  readonly path: string;

  private constructor(
    path: string,
    folder: FileHandle,
    records: SessionRecords | undefined,
    empty: FileHandle | undefined,
    o: SessionDirsOptions,
  ) {
    this.path = path;
    this.#folder = folder;
    this.#records = records;
    this.#empty = empty;
    this.#afterMake = o.afterMake;
  }

  /**
   * Opens the sessions folder (as configured, an administrator's link is followed) and
   * keeps it. Without `records`, jobs stored with SESSION_NOT_MADE have no directory.
   */
  static async open(path: string, records?: SessionRecords, o: SessionDirsOptions = {}): Promise<SessionDirs> {
    const folder = await open(path, C.O_RDONLY | C.O_DIRECTORY);
    return new SessionDirs(path, folder, records, records === undefined ? undefined : await removedEmptyDir(), o);
  }

  /** Stops a running sweep and waits for it (it uses the folder descriptor), then closes. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#sweep;
    await this.#folder.close();
    await this.#empty?.close();
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
   * Makes a job's session directory (mode 0700) at once and returns its identity; with
   * `owner` (the job's local account, docs/security.md) the directory is the account's,
   * and what the service later creates in it goes to the account too (session-owner.ts).
   * Submission does not call it (directories are made on first use); tests and tools that
   * store a job with its directory do.
   */
  createSync(id: string, owner?: SessionOwner): SessionIdentity {
    const path = inDir(this.#folder, id);
    mkdirSync(path, { mode: 0o700 });
    // Just made, empty, in the service's folder: lchown changes this directory only.
    if (owner !== undefined) lchownSync(path, owner.uid, owner.gid);
    return identityOf(lstatSync(path, { bigint: true }));
  }

  /**
   * Opens the job's session directory, verified: CE_ERR_SESSION_NOT_FOUND when nothing
   * is there, CE_ERR_SESSION_REPLACED when a link, a file or another directory is.
   * The caller closes the handle.
   */
  async openRoot(id: string, stored: SessionIdentity | null): Promise<FileHandle> {
    const identity = await this.#identity(id, stored);
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

  /**
   * While the job's directory has not been made (and no first use is making it): a runner
   * on an empty directory nothing can write, for work that only reads and prunes the
   * session, so that work does not make it. Undefined once the directory is made or being
   * made, when it was removed (SESSION_NEVER_MADE: `check` says it is missing), and when
   * the caller's record names a real directory. The runner's path, like `withRoot`'s, is
   * valid only until its callback settles.
   */
  unmadeView(
    id: string,
    stored: SessionIdentity | null,
  ): (<T>(fn: (dir: string) => Promise<T>) => Promise<T>) | undefined {
    const empty = this.#empty;
    if (stored !== SESSION_NOT_MADE || empty === undefined || this.#making.has(id)) return undefined;
    // The caller's record may be older than the store: a first use may have made it since.
    if (this.#records?.identity(id) !== SESSION_NOT_MADE) return undefined;
    return (fn) => fn(`${dirPath(empty)}/.`);
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
    stored: SessionIdentity | null,
    o: { readonly findRenamed?: boolean } = {},
  ): Promise<RemoveReport> {
    let identity = stored;
    if (stored !== null && unmade(stored)) {
      const made = await this.#neverToBeMade(id);
      if (made === undefined) return this.#removeUnmade(id);
      identity = made;
    }
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
   * The identity to check `<id>` against: the stored one, or, for a job whose directory
   * is not made yet, the identity of the directory made now. The caller's record may be
   * older than the store, so the store is asked again before anything is made.
   */
  #identity(id: string, stored: SessionIdentity | null): Promise<SessionIdentity | null> | SessionIdentity | null {
    if (stored === null || !unmade(stored)) return stored;
    let p = this.#making.get(id);
    if (p === undefined) {
      p = this.#made(id).finally(() => this.#making.delete(id));
      this.#making.set(id, p);
    }
    return p;
  }

  async #made(id: string): Promise<SessionIdentity | null> {
    const records = this.#records;
    const stored = records?.identity(id);
    if (records === undefined || stored === undefined || stored === SESSION_NEVER_MADE)
      throw ceError('CE_ERR_SESSION_NOT_FOUND');
    if (stored !== SESSION_NOT_MADE) return stored;
    const owner = await records.owner(id);
    let made = true;
    try {
      await mkdir(inDir(this.#folder, id), { mode: 0o700 });
    } catch (e) {
      if (code(e) !== 'EEXIST') return mapFsError(e);
      made = false;
    }
    await this.#afterMake?.(id);
    // From the mkdir on, the name may lose what it names at any moment: a removal that
    // looked for a making before this one was registered stores SESSION_NEVER_MADE and
    // removes the empty directory it finds. So the name is used once more, to open the
    // directory without following a link; the checks, the account and the identity go
    // through that descriptor, and a directory gone from the name is "not found".
    const h = await this.#openMade(id, made);
    let identity: SessionIdentity;
    try {
      if (!made) await adoptable(h, id, owner);
      // Just made (or adopted: empty, the owner's): the descriptor names this directory only.
      if (owner !== undefined) await h.chown(owner.uid, owner.gid);
      identity = identityOf(await h.stat({ bigint: true }));
    } finally {
      await h.close();
    }
    if (records.swapIdentity(id, SESSION_NOT_MADE, identity)) return identity;
    // Removed (or the job gone) while it was made: what was just made goes again.
    await rmdirIn(this.#folder, id).catch(() => false);
    throw ceError('CE_ERR_SESSION_NOT_FOUND');
  }

  /** Opens what is at `<id>` after the mkdir (`made`) or its EEXIST, refusing links and files. */
  async #openMade(id: string, made: boolean): Promise<FileHandle> {
    try {
      return await open(inDir(this.#folder, id), DIR_FLAGS);
    } catch (e) {
      const c = code(e);
      if (c === 'ENOENT') throw ceError('CE_ERR_SESSION_NOT_FOUND');
      if (c === 'ELOOP' || c === 'ENOTDIR')
        throw ceError(
          'CE_ERR_SESSION_REPLACED',
          made
            ? `The session directory of job ${id} was replaced while it was made`
            : `The session directory of job ${id} was taken by a link or a file before it was made`,
        );
      return mapFsError(e);
    }
  }

  /**
   * For the removal of a job whose directory was not made: stores SESSION_NEVER_MADE so
   * no later use makes it, and returns undefined; or, when it was made meanwhile, the
   * identity it was made with.
   */
  async #neverToBeMade(id: string): Promise<SessionIdentity | undefined> {
    // A making in flight finishes first (it stores its identity, used below); the read
    // and the swap that follow are one synchronous step, so no making starts between them.
    await this.#making.get(id)?.catch(() => undefined);
    const stored = this.#records?.identity(id);
    if (stored === SESSION_NOT_MADE) this.#records?.swapIdentity(id, SESSION_NOT_MADE, SESSION_NEVER_MADE);
    if (stored === undefined || stored === null || unmade(stored)) return undefined;
    return stored;
  }

  /**
   * Removal where no directory was made for the job: an empty directory (a crash's
   * leftover, or one a first use was making) goes, a link or a file in the job's place
   * is unlinked, anything else is not the job's.
   */
  async #removeUnmade(id: string): Promise<RemoveReport> {
    const s = await lstatBig(inDir(this.#folder, id));
    if (s === undefined) return { found: 'none', leftovers: [], keptForeign: false };
    if (!s.isDirectory()) {
      await unlinkIn(this.#folder, id);
      return { found: s.isSymbolicLink() ? 'link' : 'other', leftovers: [], keptForeign: false };
    }
    if (await rmdirIn(this.#folder, id)) return { found: 'own', leftovers: [], keptForeign: false };
    return { found: 'foreign', leftovers: [], keptForeign: true };
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

/**
 * Something was at `<id>` before the directory was made (open as `h`, a directory): only
 * a crash's empty leftover of the job's owner is taken.
 */
/**
 * Something is at `<id>` before the directory was made: only what a kill -9 during the
 * making leaves is taken. The making is mkdir (the service's, empty), chown (the job's
 * account's, empty), then the stored identity; so a real directory, empty, owned by the
 * service or by the job's account is finished by the caller (given to the account, its
 * identity stored). Nothing else is: the service puts nothing into the directory before
 * its identity is stored, so content is not the service's (it may be the job's or
 * another account's), and a third account's directory was never the service's. Only
 * root (the service) can make entries in the sessions folder of a mapped service (0711,
 * docs/security.md), so the account cannot plant an empty directory there; a service
 * without a mapping runs its jobs as itself, and its own uid is the owner's.
 */
async function adoptable(h: FileHandle, id: string, owner: SessionOwner | undefined): Promise<void> {
  const refuse = (what: string): never => {
    throw ceError(
      'CE_ERR_SESSION_REPLACED',
      `The session directory of job ${id} was taken by ${what} before it was made`,
    );
  };
  const uid = (await h.stat()).uid;
  if (uid !== process.geteuid?.() && uid !== owner?.uid) refuse("another account's directory");
  if ((await namesIn(h)).length > 0) refuse('a directory that is not empty');
}

/**
 * A directory made under the system's temporary folder, opened and removed: its
 * descriptor names an empty directory in which no entry can be made (ENOENT). Undefined
 * when that fails or what was opened is not what was made (another account swapped it).
 */
async function removedEmptyDir(): Promise<FileHandle | undefined> {
  let made: string;
  try {
    made = await mkdtemp(join(tmpdir(), 'ceres-empty-'));
  } catch {
    return undefined;
  }
  const h = await open(made, DIR_FLAGS).catch(() => undefined);
  await rmdir(made).catch(() => undefined);
  if (h === undefined) return undefined;
  const s = await h.stat();
  if (s.nlink === 0 && s.uid === process.geteuid?.() && (await readdir(dirPath(h))).length === 0) return h;
  await h.close();
  return undefined;
}

async function lstatBig(p: string): Promise<BigIntStats | undefined> {
  try {
    return await lstat(p, { bigint: true });
  } catch (e) {
    if (code(e) === 'ENOENT') return undefined;
    throw e;
  }
}
