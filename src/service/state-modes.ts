/**
 * The modes of the state directory, set at every start (an older directory, or one an
 * administrator copied, gets them too). Jobs under local accounts (docs/security.md)
 * must reach their own session directory and nothing else of the service:
 *
 *   <state>/            0711  passable, not listable: the way to the sessions folder
 *   <state>/sessions/   0711  passable, not listable: a job finds only its own directory
 *                             (each session directory is 0700 and its account's)
 *   control/ delegations/ cache/ lrms/ pki/   0700
 *   ceres.db (and its -wal, -shm)             0600
 *
 * A sessions folder outside the state directory (`sessions.root`) gets 0711 too.
 */
import { chmodSync, existsSync } from 'node:fs';
import type { StateLayout } from './layout.js';

export const PASSABLE = 0o711;
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

export function setStateModes(L: StateLayout): void {
  chmodSync(L.root, PASSABLE);
  chmodSync(L.sessions, PASSABLE);
  for (const d of [L.control, L.delegations, L.cache, L.lrms, L.pki]) if (existsSync(d)) chmodSync(d, PRIVATE_DIR);
  for (const f of [L.db, `${L.db}-wal`, `${L.db}-shm`]) if (existsSync(f)) chmodSync(f, PRIVATE_FILE);
}
