/**
 * Job persistence. Each operation is one statement or one short transaction:
 *  - `insertMany`: the submission transaction (durable, all-or-nothing per request);
 *  - `update`: compare-and-set on `version`; returns the new record, or undefined when
 *    the row changed underneath (the caller re-reads and re-decides) or is gone;
 *  - listing scoped by owner uses the (owner, rest_state, id) index;
 *  - bulk status answers come from the in-memory JobIndex, which every write here keeps
 *    equal to the table once the write has committed (job-index.ts).
 */
import { StateTally, type RouteTallyEntry, type StateTallyEntry, type TallyRow } from './state-tally.js';
import type { Db } from './database.js';
import { durably } from './database.js';
import { eventsAdded } from './event-signal.js';
import { JobIndex } from './job-index.js';
import { JobList, type JobListQuery, type ListedJob } from './job-list.js';
import {
  ENDED_REST_STATES,
  FINAL_STATES,
  REST_STATES,
  type InternalState,
  type LrmsSubState,
} from '../vocabulary/job-states.js';
import { sqlStates } from './state-list.js';
import {
  COLUMNS,
  columnOf,
  fromRow,
  INSERTED_KEYS,
  toColumn,
  type InsertedFields,
  type JobChanges,
  type JobRecord,
  type JobRow,
} from './job-record.js';

/**
 * One job of a submission: the record fields given at submission (job-fields.ts, flag
 * `insert`), the description text as submitted, and the delegations the job names.
 */
export interface NewJob extends Omit<
  InsertedFields,
  'description' | 'sessionIdent' | 'localAccount' | 'fqans' | 'ownerDn' | 'route' | 'name'
> {
  /** The job's name; absent: the description names none (''). */
  name?: string;
  /** The route the job took; absent: no routes configured. */
  route?: InsertedFields['route'];
  description: unknown;
  /** The owner as shown (one-line DN); absent: the owner key itself (a token's `<iss>#<sub>`). */
  ownerDn?: string;
  /** Identity of the session directory (session-dirs.ts); absent = not recorded. */
  sessionIdent?: string | null;
  /** Mapped local account (src/authz); null: not mapped. */
  localAccount?: string | null;
  /** The owner's verified VOMS FQANs at submission; null: none. */
  fqans?: readonly string[] | null;
  raw: string;
  delegationIds: readonly string[];
}

/** The statement of JobStore.routeCountsByFqan (exported for the test of its query plan). */
export function routeCountsSql(states: readonly InternalState[], pending?: boolean): string {
  return `SELECT ifnull(json_extract(fqans, '$[0]'), '') AS f, count(*) AS n FROM jobs
    WHERE route IS NOT NULL AND json_extract(route, '$.name') = ? AND state IN (${sqlStates(states)})
    ${pending === undefined ? '' : `AND pending = ${pending ? 1 : 0}`} GROUP BY f`;
}

export class JobStore {
  readonly #db: Db;
  readonly #insert;
  readonly #insertDeleg;
  readonly #get;
  readonly #getOwned;
  readonly #index = new JobIndex();
  readonly #listOwner;
  readonly #list: JobList;
  readonly #voOf;
  readonly #getInVo;
  readonly #versionsInVo;
  readonly #countActive;
  readonly #delegsOf;
  readonly #versionsOwned;
  readonly #delete;
  readonly #raw;
  readonly #updateCache = new Map<string, ReturnType<Db['prepare']>>();
  readonly #routeCounts = new Map<string, ReturnType<Db['prepare']>>();
  readonly #restStateOwnedRow;
  readonly #hasRow;
  readonly #sessionIdent;
  readonly #swapSessionIdent;
  readonly #localAccount;
  readonly #indexPage;
  readonly #tallyRow;
  /** The counts of the metrics gauges (state-tally.ts); loaded at their first read. */
  #tally: StateTally | undefined;
  /** False while the index is being filled in slices: a miss is then asked of the table. */
  #indexComplete = false;
  #indexStopped = false;

  /**
   * `index: 'later'` (the service): the index is filled by fillIndexInSlices() while
   * requests are served, so a start with a million stored jobs does not wait for it;
   * until it is complete, an id it does not hold yet is looked up in the table. Without
   * it the index is filled here, before the constructor returns.
   */
  constructor(db: Db, o: { readonly index?: 'now' | 'later' } = {}) {
    this.#db = db;
    this.#list = new JobList(db);
    // The monitoring role (src/authz/monitors.ts): a job seen through its VO (migration 17).
    this.#voOf = db.prepare('SELECT vo FROM jobs WHERE id = ?').pluck();
    this.#getInVo = db.prepare(`SELECT ${COLUMNS} FROM jobs WHERE id = ? AND vo = ?`);
    this.#versionsInVo = db
      .prepare('SELECT id, version FROM jobs WHERE id IN (SELECT value FROM json_each(?)) AND vo = ?')
      .raw();
    // The other columns start at their defaults; a new job was last updated when created.
    this.#insert = db.prepare(
      `INSERT INTO jobs (${INSERTED_KEYS.map((k) => columnOf[k]).join(', ')}, raw, updated_at)
       VALUES (${INSERTED_KEYS.map((k) => `@${k}`).join(', ')}, @raw, @createdAt)`,
    );
    this.#insertDeleg = db.prepare('INSERT OR IGNORE INTO job_delegations (job_id, delegation_id) VALUES (?, ?)');
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`);
    this.#raw = db.prepare('SELECT raw FROM jobs WHERE id = ?').pluck();
    this.#getOwned = db.prepare(`SELECT ${COLUMNS} FROM jobs WHERE id = ? AND owner = ?`);
    this.#listOwner = db.prepare('SELECT id, rest_state AS state FROM jobs WHERE owner = ? ORDER BY id');
    // IN over the active states: one index range per state, finished jobs are not scanned.
    const active = REST_STATES.filter((st) => !ENDED_REST_STATES.includes(st));
    this.#countActive = db
      .prepare(`SELECT count(*) FROM jobs WHERE owner = ? AND rest_state IN (${sqlStates(active)})`)
      .pluck();
    this.#delegsOf = db.prepare(
      'SELECT delegation_id AS d FROM job_delegations WHERE job_id = ? ORDER BY delegation_id',
    );
    this.#delete = db.prepare('DELETE FROM jobs WHERE id = ? AND version = ?');
    // One statement for a list of ids (the ids as a JSON array): a probe of the primary key per id.
    this.#versionsOwned = db
      .prepare('SELECT id, version FROM jobs WHERE id IN (SELECT value FROM json_each(?)) AND owner = ?')
      .raw();
    this.#restStateOwnedRow = db.prepare('SELECT rest_state FROM jobs WHERE id = ? AND owner = ?').pluck();
    this.#hasRow = db.prepare('SELECT 1 FROM jobs WHERE id = ?').pluck();
    this.#sessionIdent = db.prepare('SELECT session_ident FROM jobs WHERE id = ?').raw();
    this.#swapSessionIdent = db.prepare('UPDATE jobs SET session_ident = ? WHERE id = ? AND session_ident = ?');
    this.#localAccount = db.prepare('SELECT local_account FROM jobs WHERE id = ?').pluck();
    this.#indexPage = db
      .prepare('SELECT rowid, id, owner, rest_state FROM jobs WHERE rowid > ? ORDER BY rowid LIMIT ?')
      .raw();
    this.#tallyRow = db.prepare(
      `SELECT state, pending, queue, json_extract(route, '$.name') AS route, rest_state AS restState FROM jobs WHERE id = ?`,
    );
    if (o.index !== 'later') while (this.#fillIndexPage(50_000)) continue;
  }

  /**
   * Reads one slice of the table into the index (rowid order). A slice is read in one
   * synchronous statement, so it is what the table holds at that moment; every write
   * after it reaches the index through the write paths below, and a row not read yet is
   * read with its latest values later. Returns whether there is more to read.
   */
  #indexAfter = 0;
  #fillIndexPage(limit: number): boolean {
    // Streamed row by row: a slice read with all() made 50,000 row arrays of garbage at once.
    let n = 0;
    for (const [rowid, id, owner, restState] of this.#indexPage.iterate(this.#indexAfter, limit) as IterableIterator<
      [number, string, string, string]
    >) {
      this.#index.set(id, owner, restState);
      this.#indexAfter = rowid;
      n++;
    }
    if (n < limit) this.#indexComplete = true;
    return !this.#indexComplete;
  }

  /** Fills the index in slices of `slice` rows, yielding to other work in between (index: 'later'). */
  async fillIndexInSlices(slice = 50_000): Promise<void> {
    while (!this.#indexStopped && this.#fillIndexPage(slice)) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Stops an index fill in progress (before the database is closed). */
  stopIndexFill(): void {
    this.#indexStopped = true;
  }

  /** Whether the index holds every stored job (tests; the service's readiness is not held up by it). */
  get indexComplete(): boolean {
    return this.#indexComplete;
  }

  /**
   * The index is changed only after a write has committed, which holds only if no write
   * runs inside an outer transaction that could still roll back.
   */
  #topLevel(): void {
    if (this.#db.inTransaction) throw new Error('JobStore writes must not run inside an outer transaction');
  }

  /** Insert all jobs of one submission in one durable transaction. */
  insertMany(jobs: readonly NewJob[]): void {
    if (jobs.length === 0) return;
    this.#topLevel();
    durably(this.#db, () => {
      for (const j of jobs) {
        this.#insert.run(insertParams(j));
        for (const d of j.delegationIds) this.#insertDeleg.run(j.id, d);
      }
    });
    for (const j of jobs) this.#index.set(j.id, j.owner, j.restState);
    // A new job is not held (the column's default).
    if (this.#tally)
      for (const j of jobs)
        this.#tally.add(
          { state: j.state, pending: false, queue: j.queue, route: j.route?.name ?? null, restState: j.restState },
          1,
        );
    eventsAdded(this.#db);
  }

  /**
   * The job's stored session identity (src/sessions/session-dirs.ts): undefined when the
   * job is gone, null for a job stored before identities were.
   */
  sessionIdentOf(id: string): string | null | undefined {
    const row = this.#sessionIdent.get(id) as [string | null] | undefined;
    return row?.[0];
  }

  /**
   * Stores session identity `to` only where `from` is stored (compare-and-set). Not a
   * change of the job's record: its version stays, and so do the documents cached from it.
   * As durable as the job's state changes (a kill -9 loses nothing; session-dirs.ts
   * says what an operating-system crash can leave).
   */
  swapSessionIdent(id: string, from: string, to: string): boolean {
    this.#topLevel();
    return this.#swapSessionIdent.run(to, id, from).changes === 1;
  }

  /** The local account the job is mapped to, or null (undefined when the job is gone). */
  localAccountOf(id: string): string | null | undefined {
    return this.#localAccount.get(id) as string | null | undefined;
  }

  /** The description text exactly as submitted (the `description` control file). */
  rawDescription(id: string): string | undefined {
    return this.#raw.get(id) as string | undefined;
  }

  get(id: string): JobRecord | undefined {
    const r = this.#get.get(id) as JobRow | undefined;
    return r && sameId(r, id);
  }

  /** A job as visible to `owner`: someone else's job is indistinguishable from none. */
  getOwned(id: string, owner: string): JobRecord | undefined {
    const r = this.#getOwned.get(id, owner) as JobRow | undefined;
    return r && sameId(r, id);
  }

  /** The REST state of `id` if it exists and belongs to `owner` (bulk status; from memory). */
  /** Whether a job record exists (the in-memory index: no database read). */
  has(id: string): boolean {
    return this.#index.has(id) || (!this.#indexComplete && this.#hasRow.get(id) !== undefined);
  }

  restStateOwned(id: string, owner: string): string | undefined {
    const known = this.#index.restStateOwned(id, owner);
    if (known !== undefined || this.#indexComplete || this.#index.has(id)) return known;
    return this.#restStateOwnedRow.get(id, owner) as string | undefined;
  }

  listByOwner(owner: string, restStates?: readonly string[]): { id: string; state: string }[] {
    if (restStates === undefined) return this.#listOwner.all(owner) as { id: string; state: string }[];
    if (restStates.length === 0) return [];
    const marks = restStates.map(() => '?').join(',');
    return this.#db
      .prepare(`SELECT id, rest_state AS state FROM jobs WHERE owner = ? AND rest_state IN (${marks}) ORDER BY id`)
      .all(owner, ...restStates) as { id: string; state: string }[];
  }

  /** The job's VO (its first FQAN's); null: none; undefined: no such job. */
  voOf(id: string): string | null | undefined {
    return this.#voOf.get(id) as string | null | undefined;
  }

  /** A job as its VO's monitors see it: only a job of VO `vo`. */
  getInVo(id: string, vo: string): JobRecord | undefined {
    const r = this.#getInVo.get(id, vo) as JobRow | undefined;
    return r && sameId(r, id);
  }

  /** `versionsOwned` for the jobs of VO `vo`. */
  versionsInVo(ids: readonly string[], vo: string): Map<string, number> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    for (const [id, v] of this.#versionsInVo.all(JSON.stringify(ids), vo) as [string, number][]) out.set(id, v);
    return out;
  }

  /** A page of an owner's or a VO's jobs, filtered, in id order (GET jobs with filters; job-list.ts). */
  listFiltered(q: JobListQuery): ListedJob[] {
    return this.#list.find(q);
  }

  /** Jobs of `owner` that have not ended (REST state other than FINISHED, FAILED, KILLED, WIPED). */
  countActive(owner: string): number {
    return this.#countActive.get(owner) as number;
  }

  /**
   * Jobs of route `route` in `states` (and of `pending`, when given), per first FQAN ('' for
   * none): what a route's limits count (src/jobs/route-limits.ts). One statement that
   * reads the route's jobs only (index jobs_route_state), never every job.
   */
  routeCountsByFqan(route: string, states: readonly InternalState[], pending?: boolean): Map<string, number> {
    const key = `${states.join(',')}|${String(pending)}`;
    let stmt = this.#routeCounts.get(key);
    if (stmt === undefined) {
      stmt = this.#db.prepare(routeCountsSql(states, pending)).raw();
      this.#routeCounts.set(key, stmt);
    }
    return new Map(stmt.all(route) as [string, number][]);
  }

  /**
   * The record version of each of `ids` that exists and belongs to `owner` (the others are
   * absent), read in one statement: what a cache of documents made from records checks
   * before it answers from memory (src/jobs/activity-cache.ts).
   */
  versionsOwned(ids: readonly string[], owner: string): Map<string, number> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    for (const [id, v] of this.#versionsOwned.all(JSON.stringify(ids), owner) as [string, number][]) out.set(id, v);
    return out;
  }

  delegationsOf(id: string): string[] {
    return (this.#delegsOf.all(id) as { d: string }[]).map((r) => r.d);
  }

  /** Jobs in the given internal states (engine recovery and scheduling). */
  listByStates(states: readonly string[]): JobRecord[] {
    const marks = states.map(() => '?').join(',');
    return (
      this.#db
        .prepare(`SELECT ${COLUMNS} FROM jobs WHERE state IN (${marks}) ORDER BY created_at, id`)
        .all(...states) as JobRow[]
    ).map(fromRow);
  }

  /** Ids of ended jobs with a clean or restart request still to act on (engine start). */
  listFlaggedFinal(): string[] {
    return (
      this.#db
        .prepare(
          `SELECT id FROM jobs WHERE state IN (${sqlStates(FINAL_STATES)}) AND (clean_requested = 1 OR restart_requested = 1)`,
        )
        .all() as { id: string }[]
    ).map((r) => r.id);
  }

  /** Finished jobs whose session lifetime ended before `now`. */
  listExpired(now: number, limit = 500): JobRecord[] {
    return (
      this.#db
        .prepare(`SELECT ${COLUMNS} FROM jobs WHERE erase_at IS NOT NULL AND erase_at <= ? ORDER BY erase_at LIMIT ?`)
        .all(now, limit) as JobRow[]
    ).map(fromRow);
  }

  /**
   * Compare-and-set: apply `changes` only if the row still has `expected.version`.
   * Returns the updated record, or undefined if the job changed meanwhile or is gone.
   */
  update(expected: Pick<JobRecord, 'id' | 'version'>, changes: JobChanges, now = Date.now()): JobRecord | undefined {
    const keys = (Object.keys(changes) as (keyof JobChanges)[]).filter((k) => changes[k] !== undefined);
    const sig = keys.join(',');
    let stmt = this.#updateCache.get(sig);
    if (!stmt) {
      const sets = keys.map((k) => `${columnOf[k]} = @${k}`).join(', ');
      stmt = this.#db.prepare(
        `UPDATE jobs SET ${sets}${sets ? ', ' : ''}updated_at = @now, version = version + 1 WHERE id = @id AND version = @version RETURNING ${COLUMNS}`,
      );
      this.#updateCache.set(sig, stmt);
    }
    const params: Record<string, unknown> = { id: expected.id, version: expected.version, now };
    for (const k of keys) params[k] = toColumn(k, changes[k] as never);
    this.#topLevel();
    // The counted keys before the write, read only when it may change them (one probe of the primary key).
    const before =
      this.#tally !== undefined && (keys.includes('state') || keys.includes('pending') || keys.includes('restState'))
        ? this.#tallyRowOf(expected.id)
        : undefined;
    const row = stmt.get(params) as JobRow | undefined;
    if (row === undefined) return undefined;
    this.#index.set(expected.id, row.owner, row.rest_state);
    const rec = sameId(row, expected.id);
    if (before !== undefined)
      this.#tally?.move(before, {
        state: rec.state,
        pending: rec.pending,
        queue: rec.queue,
        route: rec.route?.name ?? null,
        restState: rec.restState,
      });
    // The trigger wrote an event only when the REST state changed (job-events.ts).
    if (changes.restState !== undefined) eventsAdded(this.#db);
    return rec;
  }

  #tallyRowOf(id: string): TallyRow | undefined {
    const r = this.#tallyRow.get(id) as (Omit<TallyRow, 'pending'> & { pending: number }) | undefined;
    return r === undefined ? undefined : { ...r, pending: r.pending !== 0 };
  }

  /** Remove a job record entirely (after clean, or purge of a wiped record). CAS on version. */
  delete(expected: Pick<JobRecord, 'id' | 'version'>): boolean {
    this.#topLevel();
    const before = this.#tally !== undefined ? this.#tallyRowOf(expected.id) : undefined;
    if (this.#delete.run(expected.id, expected.version).changes !== 1) return false;
    this.#index.delete(expected.id);
    if (before !== undefined) this.#tally?.add(before, -1);
    return true;
  }

  /** Job ids using a delegation (to refuse deleting a delegation in use, and for renewal). */
  jobsUsingDelegation(delegationId: string): string[] {
    return (
      this.#db.prepare('SELECT job_id AS j FROM job_delegations WHERE delegation_id = ?').all(delegationId) as {
        j: string;
      }[]
    ).map((r) => r.j);
  }

  /**
   * The stored jobs per (state, held, queue) and per routed job's (route, REST state), for the
   * metrics gauges: from memory (state-tally.ts), the same figures as countByState and
   * countByRoute. The first call counts the table once; later ones read no row.
   */
  tally(): { byState(): readonly StateTallyEntry[]; byRoute(): readonly RouteTallyEntry[] } {
    this.#tally ??= new StateTally(
      (
        this.#db
          .prepare(
            `SELECT state, pending, queue, json_extract(route, '$.name') AS route, rest_state AS restState, COUNT(*) AS n
              FROM jobs GROUP BY 1, 2, 3, 4, 5`,
          )
          .all() as (Omit<TallyRow, 'pending'> & { pending: number; n: number })[]
      ).map((g) => ({ ...g, pending: g.pending !== 0 })),
    );
    return this.#tally;
  }

  /** Routed jobs per route name and REST state (the route is stored as JSON with its name). */
  countByRoute(): RouteCount[] {
    return this.#db
      .prepare(
        "SELECT json_extract(route, '$.name') AS route, rest_state AS state, COUNT(*) AS n FROM jobs WHERE route IS NOT NULL GROUP BY 1, 2",
      )
      .all() as RouteCount[];
  }

  /**
   * countByState for the jobs not in a final state (what the info document and the web
   * overview count): read from the partial covering index of migration 21, which holds only
   * those jobs, so its cost follows the active jobs, not the stored ones (a full count read
   * every row: 400 ms at 100,000 stored jobs).
   */
  countActiveByState(): StateCount[] {
    return this.#db
      .prepare(
        `SELECT state, pending, lrms_state AS lrmsState, queue, json_extract(route, '$.name') AS route, COUNT(*) AS n
          FROM jobs INDEXED BY jobs_active_counts
          WHERE state NOT IN (${sqlStates(FINAL_STATES)}) GROUP BY state, pending, lrms_state, queue, 5`,
      )
      .all() as StateCount[];
  }

  /**
   * Jobs per (state, pending, batch state, queue, route name); the state columns are written
   * only from the vocabulary's unions. The route is null for jobs stored without one.
   */
  countByState(): StateCount[] {
    return this.#db
      .prepare(
        "SELECT state, pending, lrms_state AS lrmsState, queue, json_extract(route, '$.name') AS route, COUNT(*) AS n FROM jobs GROUP BY state, pending, lrms_state, queue, 5",
      )
      .all() as StateCount[];
  }
}

/** Routed jobs per (route, REST state); jobs stored without a route are not counted. */
export interface RouteCount {
  readonly route: string;
  readonly state: string;
  readonly n: number;
}

/** One group of countByState. */
export interface StateCount {
  readonly state: InternalState;
  readonly pending: number;
  readonly lrmsState: LrmsSubState | null;
  readonly queue: string;
  /** The name of the route the jobs took; null: none. */
  readonly route: string | null;
  readonly n: number;
}

function insertParams(j: NewJob): Record<string, unknown> {
  const params: Record<string, unknown> = { raw: j.raw };
  const given: InsertedFields = {
    ...j,
    ownerDn: j.ownerDn ?? j.owner,
    description: j.description as InsertedFields['description'],
    sessionIdent: j.sessionIdent ?? null,
    localAccount: j.localAccount ?? null,
    fqans: j.fqans ?? [],
    route: j.route ?? null,
    name: j.name ?? '',
  };
  for (const k of INSERTED_KEYS) params[k] = toColumn(k, given[k] as never);
  return params;
}

/**
 * The record of a row read by its id, holding the caller's id string rather than the copy
 * the row brings (the same characters: the row was selected by them). The engine keys its
 * per-job book-keeping (slots, wait queues, the index) by the ids of the records it reads;
 * with one string per job instead of one per read, 100,000 waiting jobs hold ~4 MiB less
 * (docs/performance.md, "Memory").
 */
function sameId(row: JobRow, id: string): JobRecord {
  (row as { id: string }).id = id;
  return fromRow(row);
}
