/**
 * The admin command's access to a state directory: the service's own database, opened
 * beside a running service (WAL lets readers and a second short writer work alongside
 * it), never migrated from here: a database at another schema version than this code's
 * is refused with what to do, so an admin command of another release cannot change a
 * database it does not understand.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, schemaVersionOf, type Db } from '../store/database.js';

export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/** `file`: the database of the state directory `stateDir` (named in messages). */
export function openStateDb(stateDir: string, file: string): Db {
  if (!existsSync(file))
    throw new AdminError(`no Ceres database in ${stateDir} (${file} does not exist): check --state-dir or --config`);
  const db = new Database(file, { fileMustExist: true });
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
