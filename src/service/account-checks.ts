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
import { access, chown, mkdir, readFile, rmdir, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { AccountResolver, LocalAccount } from '../accounts/resolve-account.js';
import { StartError } from './start-error.js';
import { PASSABLE } from './state-modes.js';
import { parseGridMapFile } from '../authz/grid-mapfile.js';

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
export async function mappedAccountNames(mapping: readonly MappingAccounts[]): Promise<string[]> {
  const names = new Set<string>();
  for (const m of mapping) {
    if (m.account !== undefined) names.add(m.account);
    for (const a of m.pool?.accounts ?? []) names.add(a);
    if (m.gridMapFile !== undefined) {
      const text = await readFile(m.gridMapFile, 'utf8').catch(() => '');
      for (const a of parseGridMapFile(text).accounts.values()) names.add(a);
    }
  }
  return [...names];
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
  /** Accounts named by the mapping. */
  readonly accounts: readonly string[];
  readonly resolver: AccountResolver;
  /** Accounts that do not resolve now are reported here (jobs for them will fail until they do). */
  readonly warn: (msg: string, obj: object) => void;
}

/** Checks the sessions folder for jobs under local accounts; a StartError says what is wrong. */
export async function checkSessionRoot(c: SessionRootCheck): Promise<void> {
  try {
    await mkdir(c.dir, { recursive: true, mode: PASSABLE });
    if (!(await stat(c.dir)).isDirectory()) throw new Error('not a directory');
    await access(c.dir, C.W_OK | C.X_OK);
  } catch (e) {
    throw new StartError(`the sessions folder ${c.dir} is not usable: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  if (c.accounts.length === 0) return;
  const resolved: LocalAccount[] = [];
  for (const name of c.accounts) {
    try {
      resolved.push(await c.resolver.resolve(name));
    } catch (e) {
      c.warn('a mapped local account does not resolve now: jobs mapped to it fail until it does', {
        account: name,
        why: e instanceof Error ? e.message : String(e),
      });
    }
  }
  const blocked = await unreachableBy(c.dir, resolved);
  if (blocked.length > 0) {
    throw new StartError(
      `mapped local accounts cannot reach the sessions folder ${c.dir}: ${blocked.map((b) => `${b.account} (stopped at ${b.dir})`).join(', ')}; ` +
        'every directory on the way must let them pass (mode o+x, or a group of theirs with g+x)',
    );
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
 * What the composition root runs at start: the refusal without root, then the sessions
 * folder check. `mapping` is the configuration's `mapping` (absent or empty: no jobs
 * under other accounts, only the folder's usability is checked).
 */
export async function checkAccountsAtStart(o: {
  readonly mapping: readonly MappingAccounts[] | undefined;
  readonly sessionsDir: string;
  readonly resolver: AccountResolver;
  readonly warn: (msg: string, obj: object) => void;
}): Promise<void> {
  const mapping = o.mapping ?? [];
  refuseMappingWithoutRoot(mapping);
  await checkSessionRoot({
    dir: o.sessionsDir,
    accounts: await mappedAccountNames(mapping),
    resolver: o.resolver,
    warn: o.warn,
  });
}
