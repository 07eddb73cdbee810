/**
 * Start-up checks for jobs under local accounts (docs/security.md):
 *
 *  - with a `mapping`, the service must run as root: only root can start a job as
 *    another account and give it its files. A service that is not root refuses to start
 *    rather than run every mapped user's job as itself (no sudo helper: one privileged
 *    path, the job wrapper's child, is easier to reason about than two).
 *  - the sessions folder must be usable: a directory the service can write, passable by
 *    others (0711), on a file system where root may give files away (an NFS export with
 *    root squash refuses), and reachable by every mapped account that resolves: each
 *    directory on the way must let it pass. The accounts that cannot are named.
 */
import { constants as C, type Stats } from 'node:fs';
import { access, chmod, chown, lstat, mkdir, readFile, rmdir, stat } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import type { AccountResolver, LocalAccount } from '../accounts/resolve-account.js';
import { StartError } from '../process/start-error.js';
import { PASSABLE } from '../process/state-modes.js';
import { parseGridMapFile, type GridMap } from '../authz/grid-mapfile.js';
import { configuredAccounts } from '../authz/mapping.js';
import { isCeError } from '../errors/ce-error.js';
import type { HostProblem } from './host-problem.js';

/** The part of a `mapping` entry that names accounts. */
export interface MappingAccounts {
  readonly account?: string | undefined;
  readonly pool?: { readonly accounts: readonly string[] } | undefined;
  readonly gridMapFile?: string | undefined;
}

/**
 * Accounts a mapping names, once each: fixed and pool accounts, and the accounts of the
 * grid-mapfiles as they read now (one that cannot be read names none; the authorizer
 * reports it).
 */
export async function mappedAccountNames(
  mapping: readonly MappingAccounts[],
  maps: Promise<readonly GridMap[]> = gridMapsOf(mapping),
): Promise<string[]> {
  const names = configuredAccounts(mapping);
  for (const g of await maps) for (const a of g.accounts.values()) names.add(a);
  return [...names];
}

/** The mapping's grid-mapfiles as they read now, once each (one that cannot be read maps nobody). */
export async function gridMapsOf(mapping: readonly MappingAccounts[]): Promise<GridMap[]> {
  const paths = new Set(mapping.flatMap((m) => (m.gridMapFile !== undefined ? [m.gridMapFile] : [])));
  return Promise.all([...paths].map(async (p) => parseGridMapFile(await readFile(p, 'utf8').catch(() => ''))));
}

/**
 * Grid-mapfile accounts that would be shared without being declared (`accounts.shared`):
 * on the lines of several DNs, or also a fixed or pool account of the mapping. The
 * load-time check (src/config/authorization-check.ts) covers fixed accounts; this one reads the
 * files as they are now. One message per account.
 */
export async function undeclaredSharing(
  mapping: readonly MappingAccounts[],
  shared: readonly string[],
  maps: Promise<readonly GridMap[]> = gridMapsOf(mapping),
): Promise<string[]> {
  const declared = new Set(shared);
  const taken = configuredAccounts(mapping);
  const dns = new Map<string, Set<string>>();
  for (const g of await maps) for (const [dn, a] of g.accounts) dns.set(a, (dns.get(a) ?? new Set()).add(dn));
  const out: string[] = [];
  for (const [a, of] of dns) {
    const users = of.size + (taken.has(a) ? 1 : 0);
    if (users > 1 && !declared.has(a))
      out.push(
        `local account ${a} is mapped to ${of.size} DN${of.size === 1 ? '' : 's'} of a grid-mapfile${taken.has(a) ? ' and by a fixed or pool mapping entry' : ''}: identities that share an account read each other's jobs and credentials; list it in accounts.shared if that is intended`,
      );
  }
  return out;
}

/** Refuses a mapping when the service cannot switch accounts (it is not root). */
export function refuseMappingWithoutRoot(mapping: readonly unknown[], euid: number = process.geteuid?.() ?? -1): void {
  if (mapping.length === 0 || euid === 0) return;
  throw new StartError(
    `the configuration maps users to local accounts (mapping: ${mapping.length} entr${mapping.length === 1 ? 'y' : 'ies'}), but the service runs as uid ${euid}, not root: ` +
      'it could not run jobs as their accounts. Run the service as root, or remove the mapping section (docs/security.md)',
  );
}

/** May `a` pass through (search) a directory with stats `s`? Owner, then group, then other bits, as the kernel decides. */
export function canPass(s: Pick<Stats, 'uid' | 'gid' | 'mode'>, a: Pick<LocalAccount, 'uid' | 'groups'>): boolean {
  if (s.uid === a.uid) return (s.mode & 0o100) !== 0;
  if (a.groups.includes(s.gid)) return (s.mode & 0o010) !== 0;
  return (s.mode & 0o001) !== 0;
}

/** Every directory from `/` down to `dir`, inclusive. */
function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.unshift(d);
    if (dirname(d) === d) return out;
  }
}

export interface Unreachable {
  readonly account: string;
  /** The first directory on the way the account cannot pass. */
  readonly dir: string;
}

/** The accounts that cannot reach `dir` (pass through every directory down to it). */
export async function unreachableBy(dir: string, accounts: readonly LocalAccount[]): Promise<Unreachable[]> {
  const chain = await Promise.all(ancestors(dir).map(async (d) => ({ d, s: await stat(d) })));
  const out: Unreachable[] = [];
  for (const a of accounts) {
    const blocked = chain.find(({ s }) => !canPass(s, a));
    if (blocked) out.push({ account: a.name, dir: blocked.d });
  }
  return out;
}

export interface SessionRootCheck {
  /** The sessions folder (made 0711 if missing). */
  readonly dir: string;
  /** The accounts jobs run as (resolved). */
  readonly accounts: readonly LocalAccount[];
}

/** Checks the sessions folder for jobs under local accounts; a StartError says what is wrong. */
export async function checkSessionRoot(c: SessionRootCheck): Promise<void> {
  const resolved = c.accounts;
  try {
    await mkdir(c.dir, { recursive: true, mode: PASSABLE });
    if (!(await stat(c.dir)).isDirectory()) throw new Error('not a directory');
    await access(c.dir, C.W_OK | C.X_OK);
  } catch (e) {
    throw new StartError(`the sessions folder ${c.dir} is not usable: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  if (resolved.length === 0) return;
  const blocked = await unreachableBy(c.dir, resolved);
  if (blocked.length > 0) {
    throw new StartError(unreachableMessage(c.dir, blocked));
  }
  const first = resolved[0];
  if (first === undefined) return;
  // Giving a directory away is what every job's session needs: try it once now.
  const probe = join(c.dir, `.ceres-owner-probe-${randomBytes(6).toString('hex')}`);
  await mkdir(probe, { mode: 0o700 });
  try {
    await chown(probe, first.uid, first.gid);
  } catch (e) {
    throw new StartError(
      `the service cannot give a session directory in ${c.dir} to local account ${first.name} (${(e as NodeJS.ErrnoException).code ?? String(e)}): ` +
        'on NFS, export the file system without root squash for this host (docs/security.md)',
      { cause: e },
    );
  } finally {
    await rmdir(probe).catch(() => undefined);
  }
}

/**
 * A sessions folder of the service's own under /var/tmp, one per state directory, for a
 * root service whose default account cannot pass its state directory (the README's
 * `npm start` in a checkout under /root). /var/tmp is world-writable but sticky: a folder
 * another user made first (or a link) is refused, never used; once ours, nobody else can
 * rename or remove it.
 */
async function ownSessionsFolder(stateDir: string): Promise<string> {
  const tag = createHash('sha256').update(resolve(stateDir)).digest('hex').slice(0, 16);
  const dir = join('/var/tmp', `ceres-sessions-${tag}`);
  await mkdir(dir, { mode: PASSABLE }).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw new StartError(`cannot make the sessions folder ${dir}: ${e.message}`, { cause: e });
  });
  const s = await lstat(dir);
  if (!s.isDirectory() || s.uid !== 0)
    throw new StartError(
      `${dir} exists and is not a folder of the service's own (a link, or made by uid ${s.uid}): refusing to keep sessions in it; remove it, or set sessions.root`,
    );
  await chmod(dir, PASSABLE);
  return dir;
}

/**
 * What the start and `ceres admin config check` say of the accounts a configuration lets
 * jobs run as (src/service/config-checks.ts): a mapped account that is root or below
 * `accounts.minUid`, an account shared without being declared, and, for a root service
 * without a mapping, a default account that is root or missing. A mapped account that
 * does not exist is a warning (the site may be adding it; its jobs fail until then).
 */
export async function accountProblems(
  c: {
    readonly mapping: readonly MappingAccounts[];
    readonly accounts: { readonly default: string; readonly minUid: number; readonly shared: readonly string[] };
  },
  host: { readonly root: boolean; readonly resolver: AccountResolver },
): Promise<HostProblem[]> {
  const out: HostProblem[] = [];
  const why = (e: unknown): string => (e instanceof Error ? e.message : String(e));
  if (c.mapping.length === 0) {
    if (!host.root) return out; // jobs run as the service's own account
    await host.resolver.resolve(c.accounts.default).catch((e: unknown) => {
      out.push({
        key: 'accounts.default',
        message: `${why(e)} (a root service without a mapping runs every job as it): create the account or name another`,
      });
    });
    return out;
  }
  const maps = gridMapsOf(c.mapping);
  for (const message of await undeclaredSharing(c.mapping, c.accounts.shared, maps))
    out.push({ key: 'mapping', message });
  for (const name of await mappedAccountNames(c.mapping, maps))
    await host.resolver.resolve(name).catch((e: unknown) => {
      const refused = isCeError(e) && e.code === 'CE_ERR_ACCOUNT_REFUSED';
      out.push({
        key: 'mapping',
        message: refused ? why(e) : `${why(e)}: jobs mapped to it fail until it exists`,
        ...(refused ? {} : { warning: true }),
      });
    });
  return out;
}

/**
 * The accounts jobs run as that cannot reach the sessions folder: every directory above
 * it must let them pass. The folder itself and a missing state directory are made (or
 * set) 0711 at start, so the way down to them is what is checked.
 */
export async function sessionsReachProblems(
  c: {
    readonly mapping: readonly MappingAccounts[];
    readonly stateDir: string;
    readonly sessionsRoot: string | undefined;
    readonly defaultAccount: string;
  },
  host: { readonly root: boolean; readonly resolver: AccountResolver },
): Promise<HostProblem[]> {
  // Not root: jobs run as the service itself. Root without a mapping and without a
  // configured folder: the start keeps sessions elsewhere when the default account cannot
  // pass the state directory (ownSessionsFolder).
  if (!host.root || (c.mapping.length === 0 && c.sessionsRoot === undefined)) return [];
  const names = c.mapping.length > 0 ? await mappedAccountNames(c.mapping) : [c.defaultAccount];
  const accounts: LocalAccount[] = [];
  for (const n of names)
    await host.resolver.resolve(n).then(
      (a) => accounts.push(a),
      () => undefined,
    );
  let dir = dirname(resolve(c.sessionsRoot ?? c.stateDir));
  while (
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    )) &&
    dirname(dir) !== dir
  )
    dir = dirname(dir);
  const blocked = await unreachableBy(dir, accounts);
  if (blocked.length === 0) return [];
  return [
    {
      key: c.sessionsRoot !== undefined ? 'sessions.root' : 'stateDir',
      message: unreachableMessage(c.sessionsRoot ?? join(c.stateDir, 'sessions'), blocked),
    },
  ];
}

function unreachableMessage(dir: string, blocked: readonly Unreachable[]): string {
  return (
    `the local accounts jobs run as cannot reach the sessions folder ${dir}: ${blocked.map((b) => `${b.account} (stopped at ${b.dir})`).join(', ')}; ` +
    'every directory on the way must let them pass (mode o+x, or a group of theirs with g+x)'
  );
}

/** Who a root service runs jobs as, said once at start (`ceres: jobs run as ...`). */
export type JobAccounts =
  /** The service is not root: every job runs as the service's own account. */
  | { readonly kind: 'self'; readonly uid: number }
  /** Root without a mapping: every job runs as the one unprivileged default account. */
  | { readonly kind: 'default'; readonly account: LocalAccount }
  /** Root with a mapping: each job as its caller's mapped account. */
  | { readonly kind: 'mapped'; readonly entries: number };

/** The start line that says who jobs run as. */
export function describeJobAccounts(j: JobAccounts): string {
  switch (j.kind) {
    case 'self':
      return `the service's own account (uid ${j.uid})`;
    case 'default':
      return `local account ${j.account.name} (uid ${j.account.uid}; accounts.default: no mapping is configured and the service runs as root)`;
    case 'mapped':
      return `their callers' mapped local accounts (${j.entries} mapping entr${j.entries === 1 ? 'y' : 'ies'})`;
  }
}

/**
 * Refuses mapped accounts that resolve to uid 0 or below the minimum uid: a grid user's
 * job would run as root or as a system account. Accounts that do not resolve now are only
 * warned about (the site may be adding them; their jobs fail until then).
 */
async function resolveMapped(
  names: readonly string[],
  resolver: AccountResolver,
  warn: (msg: string, obj: object) => void,
): Promise<LocalAccount[]> {
  const resolved: LocalAccount[] = [];
  const refused: string[] = [];
  for (const name of names) {
    try {
      resolved.push(await resolver.resolve(name));
    } catch (e) {
      if (isCeError(e) && e.code === 'CE_ERR_ACCOUNT_REFUSED') refused.push(e.message);
      else
        warn('a mapped local account does not resolve now: jobs mapped to it fail until it does', {
          account: name,
          why: e instanceof Error ? e.message : String(e),
        });
    }
  }
  if (refused.length > 0) throw new StartError(`the mapping names accounts no job may run as: ${refused.join('; ')}`);
  return resolved;
}

/** The default account of a root service without a mapping: it must exist and not be root. */
async function resolveDefault(name: string, resolver: AccountResolver): Promise<LocalAccount> {
  try {
    return await resolver.resolve(name);
  } catch (e) {
    throw new StartError(
      `the service runs as root without a mapping, so every job runs as the default account (accounts.default), but ${e instanceof Error ? e.message : String(e)}: ` +
        'create the account, name another in accounts.default, or configure a mapping (docs/security.md)',
      { cause: e },
    );
  }
}

export interface AccountsAtStart {
  readonly jobAccounts: JobAccounts;
  /**
   * The sessions folder to use: the configured one, or, when the default sessions folder
   * inside the state directory cannot be reached by the default account (a state
   * directory under /root), a folder of the service's own under /var/tmp.
   */
  readonly sessionsDir: string;
}

/**
 * What the composition root runs at start: the refusal without root, the accounts jobs
 * may run as (never root, never below `accounts.minUid`), then the sessions folder
 * check. `mapping` is the configuration's `mapping` (absent or empty: a root service runs
 * every job as `defaultAccount`; a service that is not root runs them as itself).
 */
export async function checkAccountsAtStart(o: {
  readonly mapping: readonly MappingAccounts[] | undefined;
  readonly sessionsDir: string;
  /** True when `sessionsDir` is the embedded default inside the state directory (no `sessions.root`). */
  readonly sessionsDefault: boolean;
  readonly stateDir: string;
  readonly defaultAccount: string;
  /** `accounts.shared`: accounts more than one identity may be mapped to. */
  readonly shared: readonly string[];
  readonly resolver: AccountResolver;
  readonly warn: (msg: string, obj: object) => void;
  readonly euid?: number;
}): Promise<AccountsAtStart> {
  const mapping = o.mapping ?? [];
  const euid = o.euid ?? process.geteuid?.() ?? -1;
  refuseMappingWithoutRoot(mapping, euid);
  const base = { dir: o.sessionsDir };
  if (euid !== 0) {
    await checkSessionRoot({ ...base, accounts: [] });
    return { jobAccounts: { kind: 'self', uid: euid }, sessionsDir: o.sessionsDir };
  }
  if (mapping.length > 0) {
    const maps = gridMapsOf(mapping);
    const sharing = await undeclaredSharing(mapping, o.shared, maps);
    if (sharing.length > 0) throw new StartError(sharing.join('; '));
    const resolved = await resolveMapped(await mappedAccountNames(mapping, maps), o.resolver, o.warn);
    await checkSessionRoot({ ...base, accounts: resolved });
    return { jobAccounts: { kind: 'mapped', entries: mapping.length }, sessionsDir: o.sessionsDir };
  }
  const account = await resolveDefault(o.defaultAccount, o.resolver);
  let sessionsDir = o.sessionsDir;
  if (o.sessionsDefault && (await unreachableBy(o.sessionsDir, [account])).length > 0) {
    sessionsDir = await ownSessionsFolder(o.stateDir);
    o.warn('the default account cannot reach the state directory: session directories are kept elsewhere', {
      account: account.name,
      stateDir: o.stateDir,
      sessions: sessionsDir,
    });
  }
  await checkSessionRoot({ ...base, dir: sessionsDir, accounts: [account] });
  return { jobAccounts: { kind: 'default', account }, sessionsDir };
}
