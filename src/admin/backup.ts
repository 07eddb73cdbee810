/**
 * `ceres admin backup FILE` and `ceres admin restore FILE`: one .tar.gz holding what must
 * be kept together to bring a service back with its jobs:
 *   ceres.db       a consistent copy made with SQLite's online backup (safe while the
 *                  service runs: readers and the writer are not stopped);
 *   delegations/   the key and credential files the database rows name;
 *   control/       per-job control files (diagnose, transfer statistics);
 *   lrms/          the batch backend's per-job files (how running jobs are found again);
 *   pki/           the development PKI, when the service uses it;
 *   sessions/      only with --with-sessions (job data: often large, often elsewhere).
 * The files are archived after the database copy, so a delegation renewed in between is
 * archived newer than its row (the row's file name is kept on renewal, so it is found).
 * Restore unpacks into an empty state directory while no service runs on it.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  chmodSync,
  closeSync,
  fchmodSync,
  openSync,
  statSync,
  chownSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { chmod, lstat, readdir } from 'node:fs/promises';
import { SCHEMA_VERSION, schemaVersionOf } from '../store/database.js';
import { AdminError } from './state-db.js';
import {
  ArchiveRefused,
  BACKUP_DIRS as DIRS,
  MANIFEST,
  SESSIONS,
  checkArchive,
  type ArchiveSummary,
} from './restore-checks.js';
import { settleRestoredJobs, type HeldJob, type OwnerReport, type OwnerRules } from './restore-owners.js';
import { TarFormatError, tarEntries } from './tar-entries.js';

export interface BackupResult {
  readonly file: string;
  readonly schemaVersion: number;
  readonly included: readonly string[];
}

/** `dbFile`: the state directory's database (its name comes from the service's layout). */
export async function backup(
  stateDir: string,
  dbFile: string,
  file: string,
  o: { withSessions?: boolean } = {},
): Promise<BackupResult> {
  if (!existsSync(dbFile)) throw new AdminError(`no Ceres database in ${stateDir}: check --state-dir or --config`);
  const out = resolve(file);
  const tmp = mkdtempSync(join(dirname(out), '.ceres-backup-'));
  try {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    let schemaVersion: number;
    try {
      db.pragma('busy_timeout = 5000');
      schemaVersion = schemaVersionOf(db);
      await db.backup(join(tmp, basename(dbFile)));
      // SQLite makes the copy under the umask (0644): archived so, a restore would bring
      // back a database any local account may read once the state directory is opened.
      chmodSync(join(tmp, basename(dbFile)), 0o600);
    } finally {
      db.close();
    }
    const dbName = basename(dbFile);
    // Made by this command: given to the service's account like the files beside them, so
    // the archive's members outside the jobs' folders all have one owner (restore-checks.ts).
    const owner = statSync(dbFile);
    const copies = [join(tmp, dbName), join(tmp, MANIFEST)];
    const included = [
      dbName,
      ...[...DIRS, ...(o.withSessions ? [SESSIONS] : [])].filter((d) => existsSync(join(stateDir, d))),
    ];
    writeFileSync(
      join(tmp, MANIFEST),
      JSON.stringify(
        {
          format: 'ceres-backup',
          formatVersion: 1,
          schemaVersion,
          createdAt: new Date().toISOString(),
          from: stateDir,
          included,
        },
        null,
        2,
      ),
    );
    if (process.geteuid?.() === 0) for (const f of copies) chownSync(f, owner.uid, owner.gid);
    const args = [
      '-czf',
      '-',
      '--exclude=*.sock',
      '--exclude=*.socket',
      '-C',
      tmp,
      MANIFEST,
      dbName,
      '-C',
      stateDir,
      ...included.slice(1),
    ];
    // The archive holds the database and the delegations' keys: written through a file
    // made 0600 before its first byte (tar's own file would be 0644 until a chmod after it,
    // and a reader that opened it meanwhile keeps reading).
    const fd = openSync(out, 'w', 0o600);
    try {
      fchmodSync(fd, 0o600);
      tar(args, true, fd);
    } finally {
      closeSync(fd);
    }
    return { file: out, schemaVersion, included };
  } catch (e) {
    rmSync(out, { force: true });
    throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export interface RestoreOptions {
  /** A service holds `stateDir` now. */
  readonly serviceRunning: boolean;
  /**
   * How a root restore checks the jobs' folders (restore-owners.ts), given the service's
   * uid found in the archive; undefined: only the restored sessions' identities are recorded.
   */
  readonly ownerRules?: (serviceUid: number) => OwnerRules;
}

export interface RestoreResult {
  readonly schemaVersion: number;
  readonly included: string[];
  /** Whether owners and modes were kept (a root restore). */
  readonly ownersKept: boolean;
  /** What a restore that is not root could not keep (empty when root). */
  readonly notKept: string[];
  /** Set-user-ID and set-group-ID bits cleared. */
  readonly setIdCleared: number;
  /** Jobs whose folders were not right for their account: closed, and killed unless over. */
  readonly held: readonly HeldJob[];
  readonly sessionsRecorded: number;
}

/**
 * Unpacks a backup into an empty `stateDir` (`dbFile`: where its database belongs).
 * The archive is checked member by member before anything is unpacked
 * (restore-checks.ts). As root, owners (by number) and modes are kept, then set-id bits
 * cleared and each job's folders checked against its account (restore-owners.ts); not
 * as root, everything becomes the caller's, as tar makes it, and the result says what
 * that loses. The state directory stays 0700 until the checks are done, so nothing
 * restored is reachable before.
 */
export async function restore(
  file: string,
  stateDir: string,
  dbFile: string,
  o: RestoreOptions,
): Promise<RestoreResult> {
  if (!existsSync(file)) throw new AdminError(`${file} does not exist`);
  if (o.serviceRunning) throw new AdminError(`a service is running on ${stateDir}: stop it first`);
  if (existsSync(stateDir) && readdirSync(stateDir).length > 0)
    throw new AdminError(
      `${stateDir} is not empty: restore into a new or empty directory (move the old one aside first)`,
    );
  const dbName = basename(dbFile);
  let summary: ArchiveSummary;
  try {
    summary = checkArchive(await tarEntries(file), dbName);
  } catch (e) {
    if (e instanceof TarFormatError) throw new AdminError(`${file} cannot be restored: ${e.message}`);
    if (e instanceof ArchiveRefused) throw new AdminError(`${file} is refused, nothing was restored: ${e.message}`);
    throw e;
  }
  const root = process.geteuid?.() === 0;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chmodSync(stateDir, 0o700);
  // As root: owners by number (the uids the jobs' accounts had; names could resolve to
  // other uids here) and modes as archived. Not as root tar cannot give files away.
  tar(
    [
      '-xzf',
      file,
      '-C',
      stateDir,
      ...(root ? ['--same-owner', '--numeric-owner', '--same-permissions'] : ['--no-same-owner']),
    ],
    false,
  );
  // The database is the service's alone (0600, as every start sets it), whatever mode an
  // archive of an earlier release gave it: the state directory is opened (0711) below,
  // before the service's start narrows it.
  chmodSync(dbFile, 0o600);
  const setIdCleared = await clearSetIdBits(stateDir);
  const mf = join(stateDir, MANIFEST);
  let manifest: { format?: string; schemaVersion?: number; included?: string[] };
  try {
    manifest = JSON.parse(readFileSync(mf, 'utf8')) as typeof manifest;
  } catch {
    throw new AdminError(`${file} is not a Ceres backup (no ${MANIFEST} in it)`);
  }
  if (manifest.format !== 'ceres-backup') throw new AdminError(`${file} is not a Ceres backup`);
  rmSync(mf);
  const db = new Database(dbFile, { fileMustExist: true });
  let v: number;
  let settled: OwnerReport;
  try {
    v = schemaVersionOf(db);
    if (v > SCHEMA_VERSION)
      throw new AdminError(
        `the backup's database has schema version ${v}, newer than this ceres (${SCHEMA_VERSION}): restore it with the release that made it`,
      );
    settled = await settleRestoredJobs(stateDir, db, root ? o.ownerRules?.(summary.serviceUid) : undefined);
  } finally {
    db.close();
  }
  // Done: the state directory gets the mode the service's start gives it (0711, passable:
  // src/service/state-modes.ts) now, not at the start. A batch job that ran through the
  // backup, the stop and the restore may end before the start, and its wrapper, running
  // as the job's account, must pass through here to write its status.
  chmodSync(stateDir, 0o711);
  const me = process.geteuid?.() ?? -1;
  const others = summary.uids.filter((u) => u !== me);
  const notKept =
    root || others.length === 0
      ? []
      : [
          `owners: restored as uid ${me}, not root, so what belonged to uid ${others.join(', ')} is now uid ${me}'s; jobs under local accounts cannot write their folders (restore as root to keep them)`,
          'modes: as tar makes them for a user that is not root (the umask applies, set-id bits are dropped)',
        ];
  return {
    schemaVersion: v,
    included: manifest.included ?? [],
    ownersKept: root,
    notKept,
    setIdCleared,
    held: settled.held,
    sessionsRecorded: settled.sessionsRecorded,
  };
}

/**
 * Clears set-user-ID and set-group-ID bits of everything but directories below `dir`,
 * never following a link: a restore creates no set-id program, whatever the archive
 * says. Also refuses what the archive check let through by mistake (a device or FIFO).
 */
async function clearSetIdBits(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += await clearSetIdBits(p);
    else if (e.isSymbolicLink()) continue;
    else if (!e.isFile()) throw new AdminError(`${p} is not a file, directory or link: the restore stops here`);
    else {
      const s = await lstat(p);
      if ((s.mode & 0o6000) !== 0) {
        await chmod(p, s.mode & 0o1777);
        n++;
      }
    }
  }
  return n;
}

/** GNU tar; `tolerateChanged`: exit 1 ("file changed as we read it": a live service) is a warning. */
/** `out`: the descriptor tar's standard output goes to (an archive written to `-f -`). */
function tar(args: string[], tolerateChanged: boolean, out?: number): void {
  const r = spawnSync('tar', args, { encoding: 'utf8', stdio: ['ignore', out ?? 'pipe', 'pipe'] });
  if (r.error) throw new AdminError(`tar could not be run: ${r.error.message}`);
  if (r.status === 0 || (tolerateChanged && r.status === 1)) return;
  throw new AdminError(`tar failed (exit ${r.status}): ${r.stderr.trim()}`);
}
