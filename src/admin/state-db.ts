/**
 * The admin command's access to a state directory: the service's own database, opened
 * beside a running service (WAL lets readers and a second short writer work alongside
 * it), never migrated from here: a database at another schema version than this code's
 * is refused with what to do, so an admin command of another release cannot change a
 * database it does not understand.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, schemaVersionOf, type Db } from '../store/database.js';

export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/**
 * The database cannot be opened by the user running the command (the service keeps it
 * 0600, its own): the message names the file, why, and `ownerUid`, the user to run as
 * (the caller names it, src/cli/admin/context.ts).
 */
export class DatabaseAccessError extends AdminError {
  constructor(
    readonly file: string,
    readonly why: string,
    readonly ownerUid: number | undefined,
  ) {
    super(`cannot open the database ${file}: ${why}`);
  }
}

/** Why this process cannot read and write `file` (or pass the directories down to it), or undefined. */
function accessProblem(file: string): { why: string; ownerUid: number | undefined } | undefined {
  const me = process.geteuid?.() ?? -1;
  const owner = (p: string): number | undefined => {
    try {
      return statSync(p).uid;
    } catch {
      return undefined;
    }
  };
  for (const [p, mode, what] of [
    [dirname(file), constants.X_OK, 'its folder cannot be entered'],
    [file, constants.R_OK | constants.W_OK, 'permission denied'],
  ] as const) {
    try {
      accessSync(p, mode);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EACCES') continue;
      const uid = owner(p) ?? owner(dirname(file));
      return { why: `${what} (${p} is uid ${uid ?? '?'}'s; this command runs as uid ${me})`, ownerUid: uid };
    }
  }
  return undefined;
}

/** `file`: the database of the state directory `stateDir` (named in messages). */
export function openStateDb(stateDir: string, file: string): Db {
  const denied = accessProblem(file);
  if (denied !== undefined) throw new DatabaseAccessError(file, denied.why, denied.ownerUid);
  try {
    statSync(file);
  } catch {
    throw new AdminError(`no Ceres database in ${stateDir} (${file} does not exist): check --state-dir or --config`);
  }
  let db: Db;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (e) {
    throw new DatabaseAccessError(file, e instanceof Error ? e.message : String(e), undefined);
  }
  db.pragma('busy_timeout = 5000');
  const found = schemaVersionOf(db);
  if (found !== SCHEMA_VERSION) {
    db.close();
    throw new AdminError(
      found > SCHEMA_VERSION
        ? `the database ${file} has schema version ${found}, newer than this ceres (${SCHEMA_VERSION}): use the ceres release that upgraded it`
        : `the database ${file} has schema version ${found}, older than this ceres (${SCHEMA_VERSION}): start the upgraded service once (it migrates the database), then run this again`,
    );
  }
  return db;
}
