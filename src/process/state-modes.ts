/**
 * The modes of the state directory, set at every start (an older directory, or one an
 * administrator copied, gets them too). Jobs under local accounts (docs/security.md)
 * must reach their own session directory and nothing else of the service:
 *
 *   <state>/            0711  passable, not listable: the way to the sessions folder
 *   <state>/sessions/   0711  passable, not listable: a job finds only its own directory
 *                             (each session directory is 0700 and its account's)
 *   control/ delegations/ cache/ pki/   0700
 *   lrms/                0711  passable, not listable: each batch attempt directory in it is
 *                              the backend's to protect (the fork backend makes them 0700; a
 *                              backend whose job writes its own results there, as Slurm's under
 *                              an account, hands that one directory to the account)
 *   ceres.db (and its -wal, -shm)             0600
 *
 * A sessions folder outside the state directory (`sessions.root`) gets 0711 too.
 */
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import type { StateLayout } from './layout.js';

export const PASSABLE = 0o711;
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

export function setStateModes(L: StateLayout): void {
  chmodSync(L.root, PASSABLE);
  try {
    chmodSync(L.sessions, PASSABLE);
  } catch (e) {
    // A sessions.root the service does not own (an administrator's folder, the service
    // not root): left as it is; the start-up check says whether it is usable.
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
  }
  chmodSync(L.lrms, PASSABLE);
  for (const d of [L.control, L.delegations, L.cache, L.pki, L.native]) if (existsSync(d)) chmodSync(d, PRIVATE_DIR);
  for (const f of [L.db, `${L.db}-wal`, `${L.db}-shm`]) if (existsSync(f)) chmodSync(f, PRIVATE_FILE);
}

/**
 * Makes `file` when it is missing, empty and 0600, before SQLite opens it: SQLite would make
 * it with the umask's mode (0644 mostly), readable in the passable state directory until
 * `setStateModes` narrows it, and a reader that opened it meanwhile keeps it. An empty file
 * is a new database to SQLite; its -wal and -shm take its mode.
 */
export function makePrivateFile(file: string): void {
  // Only when missing: closing any descriptor of a file drops every POSIX lock this process
  // holds on it (SQLite's among them), so an existing file is never opened here.
  try {
    closeSync(openSync(file, 'wx', PRIVATE_FILE));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}
