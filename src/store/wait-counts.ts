/**
 * The stored jobs not ended, counted by what the wait reasons read (src/jobs/wait-reason.ts):
 * state, owner, route and first FQAN. One grouped statement over the active states (index
 * jobs_state), for a process without the engine's counters (`ceres admin show`).
 */
import type { Db } from './database.js';
import { sqlStates } from './state-list.js';
import { ACTIVE_STATES, type InternalState } from '../vocabulary/job-states.js';

export interface ActiveJobCount {
  readonly state: InternalState;
  readonly pending: boolean;
  readonly owner: string;
  /** The route's name; '' without one. */
  readonly route: string;
  /** The first FQAN; '' without one. */
  readonly firstFqan: string;
  readonly n: number;
}

export function activeJobCounts(db: Db): ActiveJobCount[] {
  const rows = db
    .prepare(
      `SELECT state, pending, owner, ifnull(json_extract(route, '$.name'), '') AS route,
         ifnull(json_extract(fqans, '$[0]'), '') AS firstFqan, count(*) AS n
       FROM jobs WHERE state IN (${sqlStates(ACTIVE_STATES)}) GROUP BY 1, 2, 3, 4, 5`,
    )
    .all() as (Omit<ActiveJobCount, 'pending'> & { pending: number })[];
  return rows.map((r) => ({ ...r, pending: r.pending !== 0 }));
}
