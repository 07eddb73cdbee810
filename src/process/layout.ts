/**
 * Where things live under the state directory. One function, so every component
 * agrees and docs/operations.md can describe it.
 *
 *   <state>/ceres.db        job and delegation database (SQLite, WAL)
 *   <state>/control/        per-job control files (ARC-style layout)
 *   <state>/sessions/<id>/  session directories (or under `sessions.root`)
 *   <state>/delegations/    delegated credentials (0700 dir, 0600 files)
 *   <state>/cache/          shared input-file cache
 *   <state>/pki/            embedded development PKI (only when no host cert configured)
 *   <state>/lrms/           batch backend working files
 *   <state>/native/         the service's native memory helper, compiled on first start (malloc-trim.ts)
 *   <state>/job-credentials/  each active job's copy of its delegated credential (0711; src/accounts/job-credentials.ts);
 *                           `<sessions.root>/.ceres-credentials/` when the sessions are elsewhere
 *
 * Modes (state-modes.ts): the state directory, the sessions folder and lrms/ 0711 (a
 * job under a local account can pass through to its own session directory, not list
 * them); everything else 0700, the database files 0600.
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
  readonly native: string;
  readonly jobCredentials: string;
}

/** `sessionRoot`: the configured `sessions.root`, when the sessions live outside the state directory. */
export function stateLayout(root: string, sessionRoot?: string): StateLayout {
  return {
    root,
    db: join(root, 'ceres.db'),
    control: join(root, 'control'),
    sessions: sessionRoot ?? join(root, 'sessions'),
    delegations: join(root, 'delegations'),
    cache: join(root, 'cache'),
    pki: join(root, 'pki'),
    lrms: join(root, 'lrms'),
    native: join(root, 'native'),
    // Beside the sessions when they are on a shared file system: a batch job on another
    // node must find its credential there too. `.` never starts a job id.
    jobCredentials: sessionRoot !== undefined ? join(sessionRoot, '.ceres-credentials') : join(root, 'job-credentials'),
  };
}
