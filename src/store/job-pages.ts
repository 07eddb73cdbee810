/**
 * One page of an owner's jobs, newest first, for the web interface. Keyset pagination on
 * the index (owner, created_at, id): a page starts after the last row of the one before,
 * never at an OFFSET, so any page of 100,000 jobs reads only its own rows.
 */
import type { Db } from './database.js';

export interface JobPageRow {
  readonly id: string;
  readonly state: string;
  readonly queue: string;
  readonly createdAt: number;
  readonly exitCode: number | null;
  readonly owner: string;
}

/** Where a page starts: strictly older than this (createdAt, id). */
export interface PageKey {
  readonly createdAt: number;
  readonly id: string;
}

export class JobPages {
  readonly #first;
  readonly #after;
  readonly #countByState;
  readonly #allFirst;
  readonly #allAfter;

  constructor(db: Db) {
    const cols = 'id, rest_state AS state, queue, created_at AS createdAt, exit_code AS exitCode, owner_dn AS owner';
    // `@state IS NULL OR rest_state = @state`: one statement serves the filtered and unfiltered list.
    this.#first = db.prepare(
      `SELECT ${cols} FROM jobs INDEXED BY jobs_owner_created WHERE owner = @owner AND (@state IS NULL OR rest_state = @state) ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#after = db.prepare(
      `SELECT ${cols} FROM jobs INDEXED BY jobs_owner_created WHERE owner = @owner AND (@state IS NULL OR rest_state = @state) AND (created_at < @t OR (created_at = @t AND id < @id)) ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    // Every owner's jobs (the administrator's list), on the index (created_at, id).
    this.#allFirst = db.prepare(
      `SELECT ${cols} FROM jobs INDEXED BY jobs_created WHERE (@state IS NULL OR rest_state = @state) ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#allAfter = db.prepare(
      `SELECT ${cols} FROM jobs INDEXED BY jobs_created WHERE (@state IS NULL OR rest_state = @state) AND (created_at < @t OR (created_at = @t AND id < @id)) ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#countByState = db.prepare(
      'SELECT rest_state AS state, count(*) AS n FROM jobs WHERE owner = ? GROUP BY rest_state',
    );
  }

  /** Up to `limit` jobs of `owner` (of REST state `state` when given) older than `after`. */
  page(owner: string, state: string | undefined, after: PageKey | undefined, limit: number): JobPageRow[] {
    if (after === undefined) return this.#first.all({ owner, state: state ?? null, limit }) as JobPageRow[];
    return this.#after.all({ owner, state: state ?? null, limit, t: after.createdAt, id: after.id }) as JobPageRow[];
  }

  /** Like `page`, over every owner's jobs. */
  pageAll(state: string | undefined, after: PageKey | undefined, limit: number): JobPageRow[] {
    if (after === undefined) return this.#allFirst.all({ state: state ?? null, limit }) as JobPageRow[];
    return this.#allAfter.all({ state: state ?? null, limit, t: after.createdAt, id: after.id }) as JobPageRow[];
  }

  /** The owner's jobs per REST state. */
  countsOf(owner: string): { state: string; n: number }[] {
    return this.#countByState.all(owner) as { state: string; n: number }[];
  }
}
