/**
 * What a backup may hold, checked on its member headers (tar-entries.ts) before anything
 * is unpacked. GNU tar, run as root to keep owners, would create whatever the archive
 * names: so a member that could reach out of the state directory, give an account more
 * than its own files, or plant something the service would later follow is refused,
 * and the whole restore with it (nothing is unpacked):
 *
 *  - names: relative, no `.`/`..`/empty component, under the top-level names a backup
 *    has (the manifest, the database, delegations/, control/, lrms/, pki/, sessions/);
 *    each name once;
 *  - types: files, directories, hard links and symbolic links only: a device node, a
 *    FIFO or anything else is refused (a device file would hand its reader the device);
 *  - symbolic links only inside a session directory (`sessions/<id>/...`: the job's own
 *    data, which the service reaches without following links, src/fs/safe-fs.ts);
 *    everywhere else the service opens paths as root, and a link there would lead it
 *    out of the state directory. No member lies below a link or a file: tar would
 *    create it through the link;
 *  - a hard link names an earlier file of the same area (the same session, or the
 *    same top-level folder outside the sessions): never a file outside the archive;
 *  - no directory anyone may write, but inside a session (the job's own): a folder the
 *    service walks by path must not take an account's link or folder;
 *  - owners (a root restore keeps them by number): everything outside the sessions and
 *    the batch jobs' folders (`lrms/jobs/...`) is the service's, the owner of the
 *    database; the per-job folders are checked against the mapping after unpacking
 *    (restore-owners.ts), with the jobs' records.
 *
 * Set-user-ID and set-group-ID bits are not refused here (a job may set them on its own
 * files): the restore clears them on everything but directories after unpacking.
 */
import type { TarEntry } from './tar-entries.js';

export const MANIFEST = 'ceres-backup.json';
export const BACKUP_DIRS = ['delegations', 'control', 'lrms', 'pki'] as const;
export const SESSIONS = 'sessions';

export class ArchiveRefused extends Error {
  override readonly name = 'ArchiveRefused';
}

const quote = (s: string): string => JSON.stringify(s);

function components(name: string, what: string): string[] {
  const parts = name.split('/');
  if (name.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..'))
    throw new ArchiveRefused(`${what} ${quote(name)} is absolute or has an empty, "." or ".." component`);
  return parts;
}

/** Where a member belongs: its session (`sessions/<id>`), or its top-level folder. */
function area(parts: readonly string[]): string {
  return parts[0] === SESSIONS ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
}

/** Inside a batch job's folder (`lrms/jobs/<xx>/<id>/...`), whose owner is the job's account's. */
function perJob(parts: readonly string[]): boolean {
  return (
    (parts[0] === SESSIONS && parts.length >= 2) || (parts[0] === 'lrms' && parts[1] === 'jobs' && parts.length >= 4)
  );
}

export interface ArchiveSummary {
  /** The uid that owns the database in the archive: the service's. */
  readonly serviceUid: number;
  /** Members with a set-user-ID or set-group-ID bit (cleared after unpacking), directories aside. */
  readonly setId: number;
  /** The uids the members belong to, each once. */
  readonly uids: readonly number[];
}

/** Throws ArchiveRefused naming the first member a restore must not create. */
export function checkArchive(entries: readonly TarEntry[], dbName: string): ArchiveSummary {
  const top = new Set<string>([MANIFEST, dbName, ...BACKUP_DIRS, SESSIONS]);
  const seen = new Map<string, TarEntry>();
  let setId = 0;
  for (const e of entries) {
    const parts = components(e.name, 'member');
    if (!top.has(parts[0] ?? ''))
      throw new ArchiveRefused(`member ${quote(e.name)} is not part of a Ceres backup (unexpected top-level name)`);
    if (seen.has(e.name)) throw new ArchiveRefused(`member ${quote(e.name)} appears twice`);
    if (e.type === 'chardev' || e.type === 'blockdev')
      throw new ArchiveRefused(`member ${quote(e.name)} is a device file: a restore never creates one`);
    if (e.type === 'fifo' || e.type === 'other')
      throw new ArchiveRefused(
        `member ${quote(e.name)} is ${e.type === 'fifo' ? 'a FIFO' : `of tar type ${quote(e.flag)}`}: a restore creates only files, directories and links`,
      );
    if ((parts[0] === MANIFEST || parts[0] === dbName) && (parts.length > 1 || e.type !== 'file'))
      throw new ArchiveRefused(`member ${quote(e.name)} must be a regular file`);
    if (parts.length === 1 && parts[0] !== MANIFEST && parts[0] !== dbName && e.type !== 'dir')
      throw new ArchiveRefused(`member ${quote(e.name)} must be a directory`);
    if (parts[0] === SESSIONS && parts.length === 2 && e.type !== 'dir')
      throw new ArchiveRefused(`member ${quote(e.name)} must be a directory (a session directory)`);
    if (e.type === 'symlink' && !(parts[0] === SESSIONS && parts.length >= 3))
      throw new ArchiveRefused(
        `member ${quote(e.name)} is a symbolic link outside a session directory: the service would follow it`,
      );
    if (e.type === 'hardlink') {
      const target = components(e.linkName, `the target of hard link ${quote(e.name)},`);
      const t = seen.get(e.linkName);
      if (t === undefined || (t.type !== 'file' && t.type !== 'hardlink') || area(target) !== area(parts))
        throw new ArchiveRefused(
          `member ${quote(e.name)} is a hard link to ${quote(e.linkName)}, which is not an earlier file of the same ${parts[0] === SESSIONS ? 'session' : 'folder'}`,
        );
    }
    // The folders the service and the batch system walk by path (all but a session's
    // content, the job's own): one that anyone may write lets an account put a link or a
    // folder of its own in the service's way. (Group-writable is left alone: a folder made
    // under a umask of 002 is the service's group's, which holds no job's account.)
    if (e.type === 'dir' && (e.mode & 0o002) !== 0 && !(parts[0] === SESSIONS && parts.length >= 3))
      throw new ArchiveRefused(
        `member ${quote(e.name)} is a directory anyone may write (mode ${(e.mode & 0o7777).toString(8).padStart(4, '0')}): the service's folders never are`,
      );
    if (e.type !== 'dir' && e.type !== 'symlink' && (e.mode & 0o6000) !== 0) setId++;
    seen.set(e.name, e);
  }
  // Below a link or a file nothing may be created (tar would go through the link).
  for (const name of seen.keys()) {
    for (let i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
      const above = seen.get(name.slice(0, i));
      if (above !== undefined && above.type !== 'dir')
        throw new ArchiveRefused(`member ${quote(name)} lies below ${quote(above.name)}, which is not a directory`);
    }
  }
  const db = seen.get(dbName);
  const manifest = seen.get(MANIFEST);
  if (db === undefined || manifest === undefined)
    throw new ArchiveRefused(`not a Ceres backup (no ${manifest === undefined ? MANIFEST : dbName} in it)`);
  for (const e of seen.values()) {
    if (!perJob(e.name.split('/')) && e.uid !== db.uid)
      throw new ArchiveRefused(
        `member ${quote(e.name)} belongs to uid ${e.uid}, not to the service (uid ${db.uid}, the owner of ${dbName}): only session and batch job folders are the accounts'`,
      );
  }
  return { serviceUid: db.uid, setId, uids: [...new Set(entries.map((e) => e.uid))].sort((a, b) => a - b) };
}
