/**
 * `GET jobs` with filters and cursor paging (a Ceres extension, docs/compatibility.md): the
 * jobs of one owner, or of one VO (its monitors' view, src/authz/monitors.ts), in id
 * order, after a cursor id, at most `limit` of them.
 *
 * Keyset paging (migration 17): a page starts after the last id of the one before, never
 * at an OFFSET, and walks an index that is in id order for its scope, named with INDEXED
 * BY so the planner never picks one that needs a sort (jobs_owner_rest would, for several
 * states). So an unfiltered page reads its own rows and costs the same at any depth; a
 * filtered one reads, in addition, the rows its filters pass over (a filter that keeps one
 * job in a thousand reads a thousand rows per job answered). An exact name for one owner
 * walks (owner, name, id) and one state (owner, rest_state, id), each in id order.
 */
import type { Db } from './database.js';
import { sqlStates } from './state-list.js';
import type { RestState } from '../vocabulary/job-states.js';

export interface JobListQuery {
  /** The owner key; undefined only with `vo` (a monitor's list of a VO's jobs). */
  readonly owner?: string | undefined;
  /** The job's VO (the first FQAN's); a monitor's scope, or a filter of the owner's list. */
  readonly vo?: string | undefined;
  readonly states?: readonly RestState[] | undefined;
  /** Exact job name. */
  readonly name?: string | undefined;
  /** Exact queue. */
  readonly queue?: string | undefined;
  /** Submitted at or after (ms since the epoch). */
  readonly submittedSince?: number | undefined;
  /** Record last changed at or after (ms since the epoch). */
  readonly changedSince?: number | undefined;
  /** Only ids after this one. */
  readonly after?: string | undefined;
  /** At most this many; undefined: all. */
  readonly limit?: number | undefined;
}

export interface ListedJob {
  readonly id: string;
  readonly state: string;
}

export class JobList {
  readonly #db: Db;
  /** One prepared statement per combination of the query's parts (a few dozen at most). */
  readonly #statements = new Map<string, ReturnType<Db['prepare']>>();

  constructor(db: Db) {
    this.#db = db;
  }

  find(q: JobListQuery): ListedJob[] {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    const eq = (col: string, key: keyof JobListQuery): void => {
      const v = q[key];
      if (v === undefined) return;
      where.push(`${col} = @${key}`);
      params[key] = v;
    };
    eq('owner', 'owner');
    eq('vo', 'vo');
    eq('name', 'name');
    eq('queue', 'queue');
    // The states are the vocabulary's names (checked by the caller): inlined, not bound.
    if (q.states !== undefined) where.push(`rest_state IN (${q.states.length ? sqlStates(q.states) : 'NULL'})`);
    if (q.submittedSince !== undefined) {
      where.push('created_at >= @submittedSince');
      params.submittedSince = q.submittedSince;
    }
    if (q.changedSince !== undefined) {
      where.push('updated_at >= @changedSince');
      params.changedSince = q.changedSince;
    }
    if (q.after !== undefined) {
      where.push('id > @after');
      params.after = q.after;
    }
    if (q.limit !== undefined) params.limit = q.limit;
    // One state of one owner walks (owner, rest_state, id): in id order for that state, so
    // a page of FINISHED jobs does not read past every other state's rows.
    const index =
      q.owner === undefined
        ? 'jobs_vo'
        : q.name !== undefined
          ? 'jobs_owner_name'
          : q.states?.length === 1
            ? 'jobs_owner_rest'
            : 'jobs_owner_id';
    const sql = `SELECT id, rest_state AS state FROM jobs INDEXED BY ${index} WHERE ${where.join(' AND ')} ORDER BY id${q.limit !== undefined ? ' LIMIT @limit' : ''}`;
    let st = this.#statements.get(sql);
    if (st === undefined) this.#statements.set(sql, (st = this.#db.prepare(sql)));
    return st.all(params) as ListedJob[];
  }
}
