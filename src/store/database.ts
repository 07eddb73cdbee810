/**
 * The embedded SQLite database (better-sqlite3, WAL). One connection, owned by the
 * service process; every write is a short synchronous transaction, so there is
 * exactly one writer and no lock contention.
 *
 * Durability: synchronous=FULL for the transactions that acknowledge something to a
 * client (submission, delegation storage), so a 201 survives even a power cut;
 * engine bookkeeping uses NORMAL, which still survives `kill -9` of the service
 * (WAL frames are in the OS page cache), and is replayable from the recorded state.
 */
import Database from 'better-sqlite3';
import { migrations } from './migrations.js';
import { ownerKeyOfStored } from '../pki/rfc4514.js';

export type Db = Database.Database;

export function openDatabase(file: string): Db {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // The page cache is per connection and lives in the malloc heap: the driver's default
  // (16 MiB) stayed resident once a large store had been read through. 4 MiB holds the
  // inner pages of the jobs table and its indexes at a million jobs (docs/performance.md,
  // "Memory"); leaf pages come from the OS page cache.
  db.pragma('cache_size = -4096');
  db.function('ceres_owner_key', { deterministic: true }, (v: unknown) =>
    typeof v === 'string' ? ownerKeyOfStored(v) : v,
  );
  try {
    migrate(db);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/** Run `fn` in one transaction with synchronous=FULL (for acknowledged writes). */
export function durably<T>(db: Db, fn: () => T): T {
  db.pragma('synchronous = FULL');
  try {
    return db.transaction(fn)();
  } finally {
    db.pragma('synchronous = NORMAL');
  }
}

/** The schema version this code writes (the last migration's number). */
export const SCHEMA_VERSION = migrations[migrations.length - 1]!.version;

/**
 * The database was written by a newer Ceres: its schema has migrations this code does
 * not know, so running on it could lose or misread data. Downgrades are not supported;
 * the message says what to do instead.
 */
export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
  constructor(
    readonly file: string,
    readonly found: number,
  ) {
    super(
      `the database ${file} has schema version ${found}, newer than this ceres supports (${SCHEMA_VERSION}): it was upgraded by a newer release; run that release, or restore a backup made before the upgrade`,
    );
  }
}

/** The highest migration applied to `db` (0: none). */
export function schemaVersionOf(db: Db): number {
  const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!has) return 0;
  return (db.prepare('SELECT max(version) FROM schema_migrations').pluck().get() as number | null) ?? 0;
}

function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const found = schemaVersionOf(db);
  if (found > SCHEMA_VERSION) throw new SchemaTooNewError(db.name, found);
  const done = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, Date.now());
    })();
  }
}
