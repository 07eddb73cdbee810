/**
 * Where things live under the state directory. One function, so every component
 * agrees and docs/operations.md can describe it.
 *
 *   <state>/ceres.db        job and delegation database (SQLite, WAL)
 *   <state>/control/        per-job control files (ARC-style layout)
 *   <state>/sessions/<id>/  session directories
 *   <state>/delegations/    delegated credentials (0700 dir, 0600 files)
 *   <state>/cache/          shared input-file cache
 *   <state>/pki/            embedded development PKI (only when no host cert configured)
 *   <state>/lrms/           batch backend working files
 */
import { join } from 'node:path';

export interface StateLayout {
  readonly root: string;
  readonly db: string;
  readonly control: string;
  readonly sessions: string;
  readonly delegations: string;
  readonly cache: string;
  readonly pki: string;
  readonly lrms: string;
}

export function stateLayout(root: string): StateLayout {
  return {
    root,
    db: join(root, 'ceres.db'),
    control: join(root, 'control'),
    sessions: join(root, 'sessions'),
    delegations: join(root, 'delegations'),
    cache: join(root, 'cache'),
    pki: join(root, 'pki'),
    lrms: join(root, 'lrms'),
  };
}
