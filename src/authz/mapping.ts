/**
 * Mapping an authorized caller to a local account. The entries are tried in
 * configuration order; the first entry whose group the caller is in AND that yields an
 * account wins (a grid-mapfile without the caller's line, or an exhausted pool, passes
 * on to the next entry). With no entries configured nobody is mapped (jobs run as the
 * service's account, as without authorization); with entries, an allowed caller none of
 * them maps is refused.
 *
 * A grid-mapfile account on the lines of several DNs makes those identities one Unix
 * user (each reads the others' files and delegated credentials): it maps nobody unless
 * the account is declared in `accounts.shared`. The file can change while the service
 * runs, so this is decided per caller, not only at start.
 */
import type { Config } from '../config/schema.js';
import type { ErrorCode } from '../errors/catalog.js';
import type { AuthzSubject } from './subject.js';
import type { WatchedGridMaps } from './watched-files.js';
import type { PoolLeases } from './pool-leases.js';
import { DAY } from '../config/units.js';

export type MapResult =
  | { readonly ok: true; readonly account?: string; readonly pooled: boolean }
  | { readonly ok: false; readonly code: ErrorCode; readonly reason: string; readonly cacheable: boolean };

/** The accounts a mapping gives by configuration: fixed and pool accounts (grid-mapfiles aside). */
export function configuredAccounts(
  entries: readonly {
    readonly account?: string | undefined;
    readonly pool?: { readonly accounts: readonly string[] } | undefined;
  }[],
): Set<string> {
  return new Set(
    entries.flatMap((m) => [...(m.account !== undefined ? [m.account] : []), ...(m.pool?.accounts ?? [])]),
  );
}

export class AccountMapper {
  readonly #entries: Config['mapping'];
  readonly #files: Pick<WatchedGridMaps, 'get'>;
  readonly #leases: Pick<PoolLeases, 'lease'>;
  readonly #shared: ReadonlySet<string>;
  /** Accounts the configuration gives otherwise (fixed or pooled): a grid-mapfile line naming one shares it. */
  readonly #taken: ReadonlySet<string>;

  constructor(
    entries: Config['mapping'],
    files: Pick<WatchedGridMaps, 'get'>,
    leases: Pick<PoolLeases, 'lease'>,
    shared: Iterable<string> = [],
  ) {
    this.#shared = new Set(shared);
    this.#taken = configuredAccounts(entries);
    this.#entries = entries;
    this.#files = files;
    this.#leases = leases;
  }

  /** `owner`: the caller's owner key (the DN for certificates), the key of pool leases. */
  map(groups: ReadonlySet<string>, owner: string, s: AuthzSubject): MapResult {
    if (this.#entries.length === 0) return { ok: true, pooled: false };
    const tried: string[] = [];
    let exhausted = false;
    for (const m of this.#entries) {
      if (!groups.has(m.group)) continue;
      if (m.account !== undefined) return { ok: true, account: m.account, pooled: false };
      if (m.gridMapFile !== undefined) {
        const map = this.#files.get(m.gridMapFile);
        const a = s.kind === 'x509' ? map.accounts.get(s.dn) : undefined;
        const sharers = a === undefined ? 0 : (map.sharers.get(a) ?? 0) + (this.#taken.has(a) ? 1 : 0);
        if (a !== undefined && (sharers <= 1 || this.#shared.has(a))) return { ok: true, account: a, pooled: false };
        tried.push(
          a === undefined
            ? `group ${m.group}: no grid-mapfile line for the caller`
            : `group ${m.group}: local account ${a} of the grid-mapfile would be shared with ${sharers - 1} other identit${sharers === 2 ? 'y' : 'ies'} and is not declared shared (accounts.shared)`,
        );
      } else if (m.pool !== undefined) {
        const a = this.#leases.lease({ accounts: m.pool.accounts, idleMs: m.pool.idleReleaseDays * DAY * 1000 }, owner);
        if (a !== undefined) return { ok: true, account: a, pooled: true };
        exhausted = true;
        tried.push(`group ${m.group}: all ${m.pool.accounts.length} pool accounts are leased`);
      }
    }
    if (tried.length === 0)
      return {
        ok: false,
        code: 'CE_ERR_AUTHZ_NO_MAPPING',
        reason: 'Not authorized: no mapping rule applies to the groups of this caller',
        cacheable: true,
      };
    // An exhausted pool may free an account at any time: not cached.
    return {
      ok: false,
      code: exhausted ? 'CE_ERR_AUTHZ_POOL_EXHAUSTED' : 'CE_ERR_AUTHZ_NO_MAPPING',
      reason: `Not authorized: no local account (${tried.join('; ')})`,
      cacheable: !exhausted,
    };
  }
}
