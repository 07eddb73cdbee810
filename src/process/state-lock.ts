/**
 * One service per state directory: `<state>/ceres.lock` is held with an exclusive
 * POSIX record lock for the life of the process. The lock is taken through SQLite
 * (already a dependency; Node has no flock/fcntl): an empty database file in
 * `locking_mode=EXCLUSIVE` with a `BEGIN EXCLUSIVE` that is never committed.
 *
 * Why this and not a pid file:
 *  - the kernel drops a record lock when its process dies, however it dies (kill -9,
 *    OOM, power cut), so a stale lock can never block a restart and nothing has to
 *    guess whether a recorded pid is still "the" service;
 *  - taking it is one atomic fcntl(F_SETLK): of two racing starts exactly one wins;
 *  - SQLite also refuses a second connection of the same process (its per-inode lock
 *    table), so two services started inside one process exclude each other too;
 *  - record locks are not inherited by child processes, so batch jobs and launchers
 *    that outlive the service never hold it.
 * The journal is kept in memory: nothing is ever written, and no `-journal` file appears.
 */
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StartError } from './start-error.js';
import { makePrivateFile, PRIVATE_FILE } from './state-modes.js';

export const LOCK_FILE = 'ceres.lock';

export interface StateLock {
  readonly file: string;
  release(): void;
}

/** Another process (or another service in this process) holds the state directory. */
export class StateDirBusyError extends StartError {
  override readonly name = 'StateDirBusyError';
  constructor(
    readonly stateDir: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      `the state directory ${stateDir} is in use by another ceres serve${holderPid !== undefined ? ` (pid ${holderPid})` : ''}; only one service may run on a state directory`,
    );
  }
}

export function lockStateDir(stateDir: string): StateLock {
  const file = join(stateDir, LOCK_FILE);
  let db: Database.Database;
  try {
    // Private to the service: a local account that could open it for reading could hold a
    // read lock on it and so keep the service from starting ("in use by another ceres").
    // Made 0600 only when missing (makePrivateFile never opens an existing file: closing a
    // descriptor would drop this process's POSIX locks on it); chmod does not open it.
    makePrivateFile(file);
    chmodSync(file, PRIVATE_FILE);
    // timeout 0: fail at once instead of better-sqlite3's default 5 s busy wait.
    db = new Database(file, { timeout: 0 });
  } catch (e) {
    throw new StartError(
      `cannot lock the state directory ${stateDir}: ${file} cannot be opened (${(e as Error).message})`,
      { cause: e },
    );
  }
  try {
    db.pragma('journal_mode = MEMORY');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY') throw new StateDirBusyError(stateDir, lockHolder(file));
    throw new StartError(`cannot lock the state directory ${stateDir}: ${(e as Error).message}`, { cause: e });
  }
  return {
    file,
    release: () => {
      if (db.open) db.close();
    },
  };
}

/** The pid holding a POSIX write lock on `file`, from /proc/locks (Linux); for the message only. */
export function lockHolder(file: string): number | undefined {
  try {
    const ino = statSync(file).ino;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      // "1: POSIX  ADVISORY  WRITE 12599 fe:00:2146593 1073741824 1073742335"
      const f = line.trim().split(/\s+/);
      if (f[1] === 'POSIX' && f[3] === 'WRITE' && Number(f[5]?.split(':')[2]) === ino) {
        const pid = Number(f[4]);
        if (Number.isInteger(pid) && pid > 0) return pid;
      }
    }
  } catch {
    // not Linux, or /proc not mounted: the message goes without a pid
  }
  return undefined;
}
