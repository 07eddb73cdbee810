/**
 * Pool accounts leased to DNs, in SQLite (table `account_leases`, migration 6), so a
 * DN keeps its account across restarts and two DNs never share one.
 *
 *  - A DN holds at most one account of a pool; asking again returns the same account.
 *  - A lease is idle when its DN has made no request for the pool's idle time AND no
 *    job of the account still holds a session directory (any job record not WIPED):
 *    stricter than "no active job", because a finished job's files stay readable by the
 *    account until its session is removed, and the next DN must not inherit them.
 *  - Idle leases are released when the pool needs an account and has none free (a
 *    lease nobody needs is harmless); an exhausted pool answers undefined.
 *  - Requests refresh the lease's last use in memory; the row is written at most once
 *    per `touchEveryMs`, so a busy DN does not cost a write per request.
 *  - With a `clean` function (a root service: src/accounts/account-cleanup.ts, wired at
 *    the root), a released account does not pass on at once: its row stays, its DN
 *    replaced by CLEANING, until the previous user's processes are ended and its files
 *    in the shared temporary folders removed. Meanwhile the account is nobody's and not
 *    free (a pool with no other account answers "exhausted"); a cleanup that fails keeps
 *    it out of the pool and is tried again at the next sweep, and one cut short by a
 *    restart is started again (the row says so). An account is never handed to another
 *    identity with the previous user's processes alive.
 */
import type { Db } from '../store/database.js';
import { sqlState } from '../store/state-list.js';

const SWEEP_EVERY_MS = 10_000;
/** The DN of a released lease whose account is being cleaned up (no certificate or token owner is empty). */
export const CLEANING = '';

export interface Pool {
  readonly accounts: readonly string[];
  readonly idleMs: number;
}

export interface PoolLeasesOptions {
  readonly now?: () => number;
  readonly touchEveryMs?: number;
  /** Ends the account's processes and removes its files in the shared temporary folders; rejects when it could not. */
  readonly clean?: (account: string) => Promise<void>;
  /** A cleanup ended: `error` when it failed (the account stays out of the pool). */
  readonly onCleaned?: (account: string, error?: unknown) => void;
}

export class PoolLeases {
  readonly #now: () => number;
  readonly #touchEveryMs: number;
  readonly #byDn;
  readonly #leased;
  readonly #insert;
  readonly #touch;
  readonly #release;
  readonly #busy;
  readonly #toCleaning;
  readonly #cleaned;
  readonly #clean: PoolLeasesOptions['clean'];
  readonly #onCleaned: NonNullable<PoolLeasesOptions['onCleaned']>;
  /** Accounts whose cleanup runs now. */
  readonly #cleaning = new Set<string>();
  /** pool (its accounts) → time of its last idle sweep. */
  readonly #sweptAt = new Map<string, number>();
  /** Leased accounts: a copy of the table's keys (this class is its only writer), so a full pool costs no table read. */
  readonly #taken: Set<string>;
  /** account → last use written to the row. */
  readonly #written = new Map<string, number>();
  /** Called after leases were released (decisions cached with them are stale). */
  onRelease: (accounts: readonly string[]) => void = () => undefined;

  constructor(db: Db, o: PoolLeasesOptions = {}) {
    this.#now = o.now ?? Date.now;
    this.#touchEveryMs = o.touchEveryMs ?? 60_000;
    this.#byDn = db.prepare('SELECT account, last_used AS lastUsed FROM account_leases WHERE dn = ?');
    this.#leased = db.prepare('SELECT account, dn, last_used AS lastUsed FROM account_leases');
    this.#insert = db.prepare('INSERT INTO account_leases (account, dn, leased_at, last_used) VALUES (?, ?, ?, ?)');
    this.#touch = db.prepare('UPDATE account_leases SET last_used = ? WHERE account = ? AND last_used < ?');
    this.#release = db.prepare('DELETE FROM account_leases WHERE account = ? AND last_used = ?');
    this.#busy = db
      .prepare(`SELECT 1 FROM jobs WHERE local_account = ? AND rest_state != ${sqlState('WIPED')} LIMIT 1`)
      .pluck();
    this.#toCleaning = db.prepare('UPDATE account_leases SET dn = ? WHERE account = ? AND last_used = ?');
    this.#cleaned = db.prepare('DELETE FROM account_leases WHERE account = ? AND dn = ?');
    this.#clean = o.clean;
    this.#onCleaned = o.onCleaned ?? (() => undefined);
    const rows = this.#leased.all() as { account: string; dn: string }[];
    this.#taken = new Set(rows.map((r) => r.account));
    // Cleanups a restart cut short start again; without a cleaner (a service that is no
    // longer root runs no job as the account) there is nothing to clean.
    for (const r of rows) if (r.dn === CLEANING) this.#cleanUp(r.account);
    this.lease = db.transaction(this.lease.bind(this));
  }

  /** The DN's account in `pool`: its lease, else a free account newly leased, else undefined (exhausted). */
  lease(pool: Pool, dn: string): string | undefined {
    const now = this.#now();
    const mine = (this.#byDn.all(dn) as { account: string; lastUsed: number }[]).find((r) =>
      pool.accounts.includes(r.account),
    );
    if (mine) {
      this.#touchRow(mine.account, mine.lastUsed, now);
      return mine.account;
    }
    let free = this.#free(pool);
    if (free === undefined && this.#sweepDue(pool, now) && this.#releaseIdle(pool, now) > 0) free = this.#free(pool);
    if (free === undefined) return undefined;
    this.#insert.run(free, dn, now, now);
    this.#taken.add(free);
    this.#written.set(free, now);
    return free;
  }

  /** The DN made a request with this account (cheap: writes at most once per touch interval). */
  touch(account: string): void {
    const now = this.#now();
    this.#touchRow(account, this.#written.get(account) ?? 0, now);
  }

  #touchRow(account: string, lastWritten: number, now: number): void {
    if (now - lastWritten < this.#touchEveryMs) return;
    this.#touch.run(now, account, now);
    this.#written.set(account, now);
  }

  /**
   * An exhausted pool looks for idle leases at most once per SWEEP_EVERY_MS: callers
   * refused for a full pool retry at will, and each sweep reads every lease.
   */
  #sweepDue(pool: Pool, now: number): boolean {
    const key = pool.accounts.join(',');
    const last = this.#sweptAt.get(key);
    if (last !== undefined && now - last < SWEEP_EVERY_MS) return false;
    this.#sweptAt.set(key, now);
    return true;
  }

  #free(pool: Pool): string | undefined {
    return pool.accounts.find((a) => !this.#taken.has(a));
  }

  #releaseIdle(pool: Pool, now: number): number {
    const released: string[] = [];
    let freed = 0;
    for (const r of this.#leased.all() as { account: string; dn: string; lastUsed: number }[]) {
      if (!pool.accounts.includes(r.account)) continue;
      if (r.dn === CLEANING) {
        this.#cleanUp(r.account); // a cleanup that failed: again
        continue;
      }
      if (now - r.lastUsed < pool.idleMs || this.#busy.get(r.account) !== undefined) continue;
      if (this.#clean !== undefined) {
        // Nobody's from now on, but not free before the cleanup ends.
        if (this.#toCleaning.run(CLEANING, r.account, r.lastUsed).changes === 1) {
          released.push(r.account);
          this.#written.delete(r.account);
          this.#cleanUp(r.account);
        }
      } else if (this.#release.run(r.account, r.lastUsed).changes === 1) {
        released.push(r.account);
        this.#taken.delete(r.account);
        this.#written.delete(r.account);
        freed++;
      }
    }
    if (released.length > 0) this.onRelease(released);
    return freed;
  }

  /** Start the cleanup of a released account (once at a time); it is free when it succeeded. */
  #cleanUp(account: string): void {
    const clean = this.#clean;
    if (this.#cleaning.has(account)) return;
    if (clean === undefined) {
      this.#cleaned.run(account, CLEANING);
      this.#taken.delete(account);
      return;
    }
    this.#cleaning.add(account);
    clean(account).then(
      () => {
        this.#cleaning.delete(account);
        try {
          this.#cleaned.run(account, CLEANING);
        } catch (e) {
          // The database went away (the service is stopping): the row says "cleaning", so
          // the next start cleans up again.
          this.#onCleaned(account, e);
          return;
        }
        this.#taken.delete(account);
        this.#onCleaned(account);
      },
      (e: unknown) => {
        this.#cleaning.delete(account);
        this.#onCleaned(account, e);
      },
    );
  }

  /**
   * Drop the leases of accounts that are in no configured pool any more (the
   * configuration changed): no pool would ever release them, and they map nobody. A
   * lease whose account still has a job with a session stays until a later start, so
   * an account put back into a pool is not handed to another DN under a live job.
   */
  forgetOthers(pooled: ReadonlySet<string>): string[] {
    const gone = (this.#leased.all() as { account: string; lastUsed: number }[]).filter(
      (r) => !pooled.has(r.account) && this.#busy.get(r.account) === undefined,
    );
    for (const r of gone) {
      this.#release.run(r.account, r.lastUsed);
      this.#taken.delete(r.account);
    }
    return gone.map((r) => r.account);
  }

  /** All leases (operations and tests). */
  list(): { account: string; dn: string; lastUsed: number }[] {
    return this.#leased.all() as { account: string; dn: string; lastUsed: number }[];
  }
}
