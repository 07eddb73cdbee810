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
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, schemaVersionOf } from '../store/database.js';
import { AdminError } from './state-db.js';

const MANIFEST = 'ceres-backup.json';
const DIRS = ['delegations', 'control', 'lrms', 'pki'] as const;

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
    } finally {
      db.close();
    }
    const dbName = basename(dbFile);
    const included = [
      dbName,
      ...[...DIRS, ...(o.withSessions ? ['sessions'] : [])].filter((d) => existsSync(join(stateDir, d))),
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

/** `serviceRunning`: a service holds `stateDir` now; `dbFile`: where its database belongs. */
export function restore(
  file: string,
  stateDir: string,
  dbFile: string,
  serviceRunning: boolean,
): { schemaVersion: number; included: string[] } {
  if (!existsSync(file)) throw new AdminError(`${file} does not exist`);
  if (serviceRunning) throw new AdminError(`a service is running on ${stateDir}: stop it first`);
  if (existsSync(stateDir) && readdirSync(stateDir).length > 0)
    throw new AdminError(
      `${stateDir} is not empty: restore into a new or empty directory (move the old one aside first)`,
    );
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chmodSync(stateDir, 0o700);
  tar(['-xzf', file, '-C', stateDir, '--no-same-owner'], false);
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
  try {
    v = schemaVersionOf(db);
  } finally {
    db.close();
  }
  if (v > SCHEMA_VERSION)
    throw new AdminError(
      `the backup's database has schema version ${v}, newer than this ceres (${SCHEMA_VERSION}): restore it with the release that made it`,
    );
  return { schemaVersion: v, included: manifest.included ?? [] };
}

/** GNU tar; `tolerateChanged`: exit 1 ("file changed as we read it": a live service) is a warning. */
/** `out`: the descriptor tar's standard output goes to (an archive written to `-f -`). */
function tar(args: string[], tolerateChanged: boolean, out?: number): void {
  const r = spawnSync('tar', args, { encoding: 'utf8', stdio: ['ignore', out ?? 'pipe', 'pipe'] });
  if (r.error) throw new AdminError(`tar could not be run: ${r.error.message}`);
  if (r.status === 0 || (tolerateChanged && r.status === 1)) return;
  throw new AdminError(`tar failed (exit ${r.status}): ${r.stderr.trim()}`);
}
