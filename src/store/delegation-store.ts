/**
 * Delegation metadata in SQLite (table `delegations`, migration 2). Key material is
 * never here: rows name files in the delegation directory (key-files.ts).
 *
 * Every write that acknowledges something to a client (a new delegation, a stored
 * credential, a renewal request) runs with `durably`, so an answered 201/200 survives
 * a crash. Changes to an existing row are compare-and-set on `version`, so two
 * concurrent requests on one delegation (a PUT racing a renew) cannot both win.
 */
import { durably, type Db } from './database.js';
import type { DelegationType } from '../vocabulary/delegations.js';
import { FINAL_STATES } from '../vocabulary/job-states.js';
import { sqlStates } from './state-list.js';

export interface DelegationRow {
  readonly id: string;
  readonly owner: string;
  readonly type: DelegationType;
  /** File holding the current credential; null while an X.509 delegation awaits its first certificate. */
  readonly credFile: string | null;
  /** When the current credential stops being valid (ms); null = none yet, or a token without `exp`. */
  readonly expiresAt: number | null;
  /** Key file of the outstanding certificate request (X.509). */
  readonly reqFile: string | null;
  readonly reqExpiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly version: number;
}

interface Raw {
  id: string;
  owner: string;
  type: DelegationType;
  cred_file: string | null;
  expires_at: number | null;
  req_file: string | null;
  req_expires_at: number | null;
  created_at: number;
  updated_at: number;
  version: number;
}

const fromRaw = (r: Raw): DelegationRow => ({
  id: r.id,
  owner: r.owner,
  type: r.type,
  credFile: r.cred_file,
  expiresAt: r.expires_at,
  reqFile: r.req_file,
  reqExpiresAt: r.req_expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  version: r.version,
});

/** Fields a compare-and-set update may change; `undefined` leaves a column alone, `null` clears it. */
export interface RowChanges {
  credFile?: string | null;
  expiresAt?: number | null;
  reqFile?: string | null;
  reqExpiresAt?: number | null;
}

export class DelegationStore {
  readonly #db: Db;
  readonly #get;
  readonly #insert;
  readonly #delete;
  readonly #listOwner;
  readonly #listOwnerType;
  readonly #countLive;
  readonly #activeJobs;
  readonly #updates = new Map<string, ReturnType<Db['prepare']>>();

  constructor(db: Db) {
    this.#db = db;
    this.#get = db.prepare('SELECT * FROM delegations WHERE id = ?');
    this.#insert = db.prepare(
      `INSERT INTO delegations (id, owner, type, cred_file, expires_at, req_file, req_expires_at, created_at, updated_at)
       VALUES (@id, @owner, @type, @credFile, @expiresAt, @reqFile, @reqExpiresAt, @now, @now)`,
    );
    this.#delete = db.prepare('DELETE FROM delegations WHERE id = ? AND version = ?');
    // "Offered" = holds a credential that has not expired (see DelegationService.list).
    const offered = 'cred_file IS NOT NULL AND (expires_at IS NULL OR expires_at > @now)';
    this.#listOwner = db.prepare(`SELECT id, type FROM delegations WHERE owner = @owner AND ${offered} ORDER BY id`);
    this.#listOwnerType = db.prepare(
      `SELECT id, type FROM delegations WHERE owner = @owner AND type = @type AND ${offered} ORDER BY id`,
    );
    this.#countLive = db.prepare(
      'SELECT COUNT(*) AS n FROM delegations WHERE owner = @owner AND (expires_at IS NULL OR expires_at > @now)',
    );
    // Jobs are linked to delegations through job_delegations (migration 1). A job is
    // active until it is in a final state: ended (FINISHED) or wiped (DELETED).
    this.#activeJobs = db.prepare(
      `SELECT COUNT(*) AS n FROM job_delegations jd JOIN jobs j ON j.id = jd.job_id
       WHERE jd.delegation_id = ? AND j.state NOT IN (${sqlStates(FINAL_STATES)})`,
    );
  }

  get(id: string): DelegationRow | undefined {
    const r = this.#get.get(id) as Raw | undefined;
    return r && fromRaw(r);
  }

  /** Insert a new delegation (durable: the answer to action=new acknowledges it). */
  insert(
    r: {
      id: string;
      owner: string;
      type: DelegationType;
      credFile: string | null;
      expiresAt: number | null;
      reqFile: string | null;
      reqExpiresAt: number | null;
    },
    now: number,
  ): void {
    durably(this.#db, () => this.#insert.run({ ...r, now }));
  }

  /**
   * Compare-and-set: apply `changes` only if the row still has `expected.version`.
   * Returns the new row, or undefined when the row changed meanwhile or is gone.
   */
  update(
    expected: Pick<DelegationRow, 'id' | 'version'>,
    changes: RowChanges,
    now: number,
    durable = true,
  ): DelegationRow | undefined {
    const cols: Record<keyof RowChanges, string> = {
      credFile: 'cred_file',
      expiresAt: 'expires_at',
      reqFile: 'req_file',
      reqExpiresAt: 'req_expires_at',
    };
    const keys = (Object.keys(changes) as (keyof RowChanges)[]).filter((k) => changes[k] !== undefined);
    const sets = keys.map((k) => `${cols[k]} = @${k}`).join(', ');
    let stmt = this.#updates.get(sets);
    if (stmt === undefined) {
      stmt = this.#db.prepare(
        `UPDATE delegations SET ${sets}${sets ? ', ' : ''}updated_at = @now, version = version + 1 WHERE id = @id AND version = @version RETURNING *`,
      );
      this.#updates.set(sets, stmt);
    }
    const st = stmt;
    const params: Record<string, unknown> = { id: expected.id, version: expected.version, now };
    for (const k of keys) params[k] = changes[k];
    const run = (): Raw | undefined => st.get(params) as Raw | undefined;
    const r = durable ? durably(this.#db, run) : run();
    return r && fromRaw(r);
  }

  /** Delete a row (CAS on version); durable when it answers a client, not for the sweep. */
  delete(expected: Pick<DelegationRow, 'id' | 'version'>, durable = true): boolean {
    const run = (): boolean => this.#delete.run(expected.id, expected.version).changes === 1;
    return durable ? durably(this.#db, run) : run();
  }

  listOffered(owner: string, now: number, type?: DelegationType): { id: string; type: DelegationType }[] {
    return (
      type === undefined ? this.#listOwner.all({ owner, now }) : this.#listOwnerType.all({ owner, type, now })
    ) as { id: string; type: DelegationType }[];
  }

  /** Unexpired delegations of an owner, pending requests included (for the per-user cap). */
  countLive(owner: string, now: number): number {
    return (this.#countLive.get({ owner, now }) as { n: number }).n;
  }

  /** Jobs that have not ended and name this delegation. */
  activeJobsUsing(id: string): number {
    return (this.#activeJobs.get(id) as { n: number }).n;
  }

  /** Delegations whose credential expired before `before` (past the grace period). */
  listExpiredBefore(before: number, limit = 1000): DelegationRow[] {
    return (
      this.#db
        .prepare(
          'SELECT * FROM delegations WHERE expires_at IS NOT NULL AND expires_at < ? ORDER BY expires_at LIMIT ?',
        )
        .all(before, limit) as Raw[]
    ).map(fromRaw);
  }

  /** Delegations with a certificate request that lapsed before `before`. */
  listLapsedRequests(before: number, limit = 1000): DelegationRow[] {
    return (
      this.#db
        .prepare(
          'SELECT * FROM delegations WHERE req_expires_at IS NOT NULL AND req_expires_at < ? ORDER BY req_expires_at LIMIT ?',
        )
        .all(before, limit) as Raw[]
    ).map(fromRaw);
  }

  /** Every file name some row refers to (for removing orphaned files). */
  referencedFiles(): Set<string> {
    const out = new Set<string>();
    for (const r of this.#db
      .prepare(
        'SELECT cred_file AS c, req_file AS q FROM delegations WHERE cred_file IS NOT NULL OR req_file IS NOT NULL',
      )
      .all() as { c: string | null; q: string | null }[]) {
      if (r.c !== null) out.add(r.c);
      if (r.q !== null) out.add(r.q);
    }
    return out;
  }
}
