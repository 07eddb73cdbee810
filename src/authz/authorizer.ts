/**
 * The authorization decision for an authenticated caller: its groups, whether one of
 * them is allowed, its local account, and the queues it may use. Made once per caller
 * and cached; the cache is dropped when a configured file changes (checked at most
 * every FILE_CHECK_MS) or a pool lease is released, so the work per request is a map
 * lookup (and a stat of each file every few seconds).
 *
 * Without an `authorization` section there is no Authorizer: every caller with a
 * certificate from a trusted CA is allowed and nobody is mapped, as before.
 */
import type { Config } from '../config/schema.js';
import type { Db } from '../store/database.js';
import { ceError } from '../errors/ce-error.js';
import { Groups } from './match-rules.js';
import { monitoredVos } from './monitors.js';
import { AccountMapper, type MapResult } from './mapping.js';
import { PoolLeases, type PoolLeasesOptions } from './pool-leases.js';
import { subjectKey, type AuthzSubject } from './subject.js';
import { WatchedGridMaps, type FileEvent } from './watched-files.js';

/** How often the configured files are stat'ed for changes. */
export const FILE_CHECK_MS = 2000;
/** Most cached decisions; beyond, the cache starts over (a bound, not an LRU). */
const MAX_CACHED = 10_000;

export interface Grant {
  /** Authorization groups of the caller, in configuration order. */
  readonly groups: readonly string[];
  /** The mapped local account; absent when no mapping is configured. */
  readonly localAccount?: string;
  /** Queues the caller may use; absent: all. */
  readonly queues?: readonly string[];
  /** VOs whose jobs the caller monitors (./monitors.ts); absent: none. */
  readonly monitors?: readonly string[];
}

type Decision =
  { readonly ok: true; readonly grant: Grant; readonly pooled: boolean } | Extract<MapResult, { ok: false }>;

export interface AuthorizerOptions {
  readonly now?: () => number;
  readonly onFileLoad?: (e: FileEvent) => void;
  readonly fileCheckMs?: number;
  /** Fixed accounts more than one identity may share (`accounts.shared`). */
  readonly sharedAccounts?: readonly string[];
  /** Leases of accounts no configured pool holds any more were dropped at start. */
  readonly onLeasesDropped?: (accounts: readonly string[]) => void;
  /** Cleans up a released pool account before it passes on (./pool-leases.ts; a root service). */
  readonly cleanAccount?: PoolLeasesOptions['clean'];
  readonly onAccountCleaned?: PoolLeasesOptions['onCleaned'];
}

export class Authorizer {
  readonly #allow: ReadonlySet<string>;
  readonly #groups: Groups;
  readonly #mapper: AccountMapper;
  readonly #files: WatchedGridMaps;
  readonly #leases: PoolLeases;
  readonly #queues: readonly { name: string; allow?: readonly string[] }[];
  readonly #monitors: NonNullable<NonNullable<Config['authorization']>['monitors']>;
  readonly #cache = new Map<string, Decision>();

  constructor(
    authz: NonNullable<Config['authorization']>,
    mapping: Config['mapping'],
    queues: Config['cluster']['queues'],
    db: Db,
    o: AuthorizerOptions = {},
  ) {
    const paths = new Set<string>();
    for (const g of authz.groups) for (const r of g.match) if (r.gridMapFile !== undefined) paths.add(r.gridMapFile);
    for (const m of mapping) if (m.gridMapFile !== undefined) paths.add(m.gridMapFile);
    this.#files = new WatchedGridMaps(paths, {
      intervalMs: o.fileCheckMs ?? FILE_CHECK_MS,
      ...(o.now ? { now: o.now } : {}),
      ...(o.onFileLoad ? { onLoad: o.onFileLoad } : {}),
    });
    this.#leases = new PoolLeases(db, {
      ...(o.now ? { now: o.now } : {}),
      ...(o.cleanAccount ? { clean: o.cleanAccount } : {}),
      ...(o.onAccountCleaned ? { onCleaned: o.onAccountCleaned } : {}),
    });
    this.#leases.onRelease = () => this.#cache.clear();
    const dropped = this.#leases.forgetOthers(new Set(mapping.flatMap((m) => m.pool?.accounts ?? [])));
    if (dropped.length > 0) o.onLeasesDropped?.(dropped);
    this.#allow = new Set(authz.allow);
    this.#groups = new Groups(authz, this.#files);
    this.#mapper = new AccountMapper(mapping, this.#files, this.#leases, o.sharedAccounts);
    this.#queues = queues;
    this.#monitors = authz.monitors ?? [];
  }

  /** The caller's grant, or a 403 CeError with the reason. `owner`: the caller's owner key (DN). */
  authorize(s: AuthzSubject, owner: string): Grant {
    if (this.#files.refresh()) this.#cache.clear();
    const key = subjectKey(s);
    let d = this.#cache.get(key);
    if (d === undefined) {
      d = this.#decide(s, owner);
      if (d.ok || d.cacheable) {
        if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
        this.#cache.set(key, d);
      }
    } else if (d.ok && d.pooled && d.grant.localAccount !== undefined) {
      this.#leases.touch(d.grant.localAccount);
    }
    if (!d.ok) throw ceError(d.code, d.reason);
    return d.grant;
  }

  #decide(s: AuthzSubject, owner: string): Decision {
    const groups = this.#groups.of(s);
    const allowed = groups.filter((g) => this.#allow.has(g));
    if (allowed.length === 0) {
      const reason =
        groups.length === 0
          ? 'Not authorized: the caller matches no authorization group'
          : `Not authorized: none of the caller's groups (${groups.join(', ')}) is allowed`;
      return { ok: false, code: 'CE_ERR_AUTHZ_NOT_ALLOWED', reason, cacheable: true };
    }
    const mapped = this.#mapper.map(new Set(groups), owner, s);
    if (!mapped.ok) return mapped;
    const restricted = this.#queues.some((q) => q.allow !== undefined);
    const queues = restricted
      ? this.#queues.filter((q) => q.allow === undefined || q.allow.some((g) => groups.includes(g))).map((q) => q.name)
      : undefined;
    const monitors = monitoredVos(this.#monitors, groups);
    const grant: Grant = {
      groups,
      ...(monitors.length > 0 ? { monitors } : {}),
      ...(mapped.account !== undefined ? { localAccount: mapped.account } : {}),
      ...(queues !== undefined ? { queues } : {}),
    };
    return { ok: true, grant, pooled: mapped.pooled };
  }

  /** Current pool leases (operations and tests). */
  leases(): { account: string; dn: string; lastUsed: number }[] {
    return this.#leases.list();
  }
}
