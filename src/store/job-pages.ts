/**
 * Pages of jobs for the web interface: an owner's (or, for administrators, everyone's),
 * sorted by submission, end or name, filtered by REST state, a search text and (for
 * administrators) owner, account and VO. Keyset pagination on an index whose order is the
 * page's order (migrations 9 and 16): a page starts after the last row of the one before,
 * never at an OFFSET, and the index is walked in order (INDEXED BY: no sort step), so a
 * page reads only its own rows plus those its filters pass over.
 */
import type { Db } from './database.js';

export interface JobPageRow {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly queue: string;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
  readonly exitCode: number | null;
  /** The owner as shown (one-line DN or token subject). */
  readonly owner: string;
  readonly localAccount: string | null;
  /** The submitter's VOMS FQANs as stored (JSON array text) or null. */
  readonly fqans: string | null;
}

/** Where a page starts: strictly after this (createdAt, id) of the default sort. */
export interface PageKey {
  readonly createdAt: number;
  readonly id: string;
}

/**
 * The orders a page can have, each walked on its own index: the expression is the
 * index's (SQLite uses an expression index only for the very same expression), `desc`
 * its direction; the id breaks ties. A job not ended sorts as ended at 0: last.
 */
export const JOB_SORTS = {
  submitted: { expr: 'created_at', desc: true, own: 'jobs_owner_created', all: 'jobs_created' },
  ended: { expr: 'ifnull(ended_at, 0)', desc: true, own: 'jobs_owner_ended', all: 'jobs_ended' },
  name: { expr: 'name', desc: false, own: 'jobs_owner_name', all: 'jobs_name' },
} as const;
export type JobSort = keyof typeof JOB_SORTS;

export interface JobQuery {
  /** The owner key; undefined: every owner (the administrator's list). */
  readonly owner?: string | undefined;
  readonly state?: string | undefined;
  /** Part of the job name (any case) or the start of its id. */
  readonly search?: string | undefined;
  readonly sort?: JobSort | undefined;
  /** After this sort value and id (the last row of the page before). */
  readonly after?: { readonly value: number | string; readonly id: string } | undefined;
  /** Administrator filters: the owner as shown, the local account, a VO of the FQANs. */
  readonly ownerDn?: string | undefined;
  readonly account?: string | undefined;
  readonly vo?: string | undefined;
  readonly limit: number;
}

const COLS =
  'id, name, rest_state AS state, queue, created_at AS createdAt, started_at AS startedAt, ended_at AS endedAt, exit_code AS exitCode, owner_dn AS owner, local_account AS localAccount, fqans';

/** The value of a row's sort column, to continue after it. */
export function sortValue(sort: JobSort, r: JobPageRow): number | string {
  if (sort === 'submitted') return r.createdAt;
  if (sort === 'ended') return r.endedAt ?? 0;
  return r.name;
}

/** The VO of an FQAN (`/atlas/Role=x` -> `atlas`). */
export const voOf = (fqan: string): string => fqan.split('/')[1] ?? '';

export class JobPages {
  readonly #db: Db;
  /** One prepared statement per combination of the query's parts (a few hundred at most). */
  readonly #statements = new Map<string, ReturnType<Db['prepare']>>();
  readonly #countByState;
  readonly #usingDelegation;

  constructor(db: Db) {
    this.#db = db;
    // The owner's jobs linked to a delegation (job_delegations, migration 1), newest first.
    this.#usingDelegation = db.prepare(
      `SELECT j.id AS id, j.name AS name, j.rest_state AS state FROM job_delegations jd JOIN jobs j ON j.id = jd.job_id
       WHERE jd.delegation_id = ? AND j.owner = ? ORDER BY j.created_at DESC, j.id DESC LIMIT ?`,
    );
    this.#countByState = db.prepare(
      'SELECT rest_state AS state, count(*) AS n FROM jobs WHERE owner = ? GROUP BY rest_state',
    );
  }

  /** Up to `q.limit` jobs matching `q`, in its order, after `q.after`. */
  find(q: JobQuery): JobPageRow[] {
    const sort = JOB_SORTS[q.sort ?? 'submitted'];
    const where: string[] = [];
    if (q.owner !== undefined) where.push('owner = @owner');
    if (q.state !== undefined) where.push('rest_state = @state');
    if (q.search !== undefined) where.push('(instr(lower(name), lower(@search)) > 0 OR instr(id, @search) = 1)');
    if (q.ownerDn !== undefined) where.push('owner_dn = @ownerDn');
    if (q.account !== undefined) where.push('local_account = @account');
    // Any FQAN of the VO (the VO itself or a group below it).
    if (q.vo !== undefined)
      where.push(
        "EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(fqans) THEN fqans ELSE '[]' END) WHERE value = '/' || @vo OR substr(value, 1, length(@vo) + 2) = '/' || @vo || '/')",
      );
    const cmp = sort.desc ? '<' : '>';
    if (q.after !== undefined) where.push(`(${sort.expr} ${cmp} @v OR (${sort.expr} = @v AND id ${cmp} @id))`);
    const dir = sort.desc ? 'DESC' : 'ASC';
    const sql = `SELECT ${COLS} FROM jobs INDEXED BY ${q.owner === undefined ? sort.all : sort.own}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${sort.expr} ${dir}, id ${dir} LIMIT @limit`;
    let st = this.#statements.get(sql);
    if (st === undefined) this.#statements.set(sql, (st = this.#db.prepare(sql)));
    const params: Record<string, unknown> = { limit: q.limit };
    for (const k of ['owner', 'state', 'search', 'ownerDn', 'account', 'vo'] as const)
      if (q[k] !== undefined) params[k] = q[k];
    if (q.after !== undefined) Object.assign(params, { v: q.after.value, id: q.after.id });
    return st.all(params) as JobPageRow[];
  }

  /** Up to `limit` jobs of `owner` (of REST state `state` when given) older than `after`. */
  page(owner: string, state: string | undefined, after: PageKey | undefined, limit: number): JobPageRow[] {
    return this.find({ owner, state, limit, after: after && { value: after.createdAt, id: after.id } });
  }

  /** Like `page`, over every owner's jobs. */
  pageAll(state: string | undefined, after: PageKey | undefined, limit: number): JobPageRow[] {
    return this.find({ state, limit, after: after && { value: after.createdAt, id: after.id } });
  }

  /** Up to `limit` of the owner's jobs that use delegation `id` (any state), newest first. */
  usingDelegation(owner: string, id: string, limit: number): { id: string; name: string; state: string }[] {
    return this.#usingDelegation.all(id, owner, limit) as { id: string; name: string; state: string }[];
  }

  /** The owner's jobs per REST state. */
  countsOf(owner: string): { state: string; n: number }[] {
    return this.#countByState.all(owner) as { state: string; n: number }[];
  }
}
