/**
 * Local accounts by name: uid, primary gid, supplementary groups and home, as the
 * system's name service sees them. Asked through `getent passwd` and `id -G` (never by
 * reading /etc/passwd), so accounts that come from LDAP or SSSD at a site resolve the
 * same way as local ones. Answers are kept for a short time: a mapping lookup per job
 * would otherwise start two processes per job; an account changed by the site is seen
 * after at most `ttlMs`.
 *
 * An account that does not resolve is an error (CE_ERR_ACCOUNT_UNKNOWN), never "run as
 * the service user"; an account with uid 0 is refused (CE_ERR_ACCOUNT_REFUSED): mapping a
 * grid user to root is a configuration mistake, not a wish. So is one below the policy's
 * minimum uid (`accounts.minUid`: system accounts such as `daemon` or `bin` own files a
 * grid user must not), except the configured default account (`accounts.default`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ceError } from '../errors/ce-error.js';

const run = promisify(execFile);

export interface LocalAccount {
  readonly name: string;
  readonly uid: number;
  /** Primary group. */
  readonly gid: number;
  /** Every group the account is in (primary included), as initgroups(3) would set them. */
  readonly groups: readonly number[];
  readonly home: string;
}

/** POSIX portable user names, plus what sites use in practice ('.', '@', a trailing '$'). */
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}\$?$/;

async function query(cmd: string, args: readonly string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run(cmd, args, { timeout: 10_000, maxBuffer: 1 << 20 });
    return stdout;
  } catch (e) {
    // getent: 2 = not found; id: 1 = no such user. Anything else (a timeout, no
    // getent at all) is also "cannot resolve": the caller fails the job either way.
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOENT')
      throw ceError('CE_ERR_ACCOUNT_UNKNOWN', `cannot ask the name service: ${cmd} is not installed`);
    return undefined;
  }
}

/** Which resolved accounts a job may run as (`accounts.minUid`, `accounts.default`). */
export interface AccountPolicy {
  /** Lowest uid allowed; uid 0 is refused whatever this says. */
  readonly minUid: number;
  /** The one account exempt from `minUid` (the default account of a root service). */
  readonly exempt?: string | undefined;
}

/** No minimum beyond "never root": what a resolver without a configured policy applies. */
export const ROOT_ONLY_POLICY: AccountPolicy = { minUid: 1 };

/** The refusal of an account by uid, or undefined when `policy` allows it. */
export function refusalOf(a: Pick<LocalAccount, 'name' | 'uid'>, policy: AccountPolicy): string | undefined {
  if (a.uid === 0) return `local account ${a.name} has uid 0: jobs never run as root`;
  if (a.uid < policy.minUid && a.name !== policy.exempt)
    return `local account ${a.name} has uid ${a.uid}, below the lowest uid a job may run as (accounts.minUid ${policy.minUid}): a system account is never a grid user's`;
  return undefined;
}

/** Resolves `name` now, without the cache. */
export async function lookUpAccount(name: string, policy: AccountPolicy = ROOT_ONLY_POLICY): Promise<LocalAccount> {
  if (!NAME.test(name))
    throw ceError('CE_ERR_ACCOUNT_UNKNOWN', `local account ${JSON.stringify(name)} is not a valid account name`);
  const pw = (await query('getent', ['passwd', name]))?.split('\n')[0];
  // name:password:uid:gid:gecos:home:shell
  const f = pw?.split(':');
  if (f === undefined || f.length < 7 || f[0] !== name)
    throw ceError('CE_ERR_ACCOUNT_UNKNOWN', `local account ${name} does not exist`);
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid) || uid < 0 || gid < 0) {
    throw ceError('CE_ERR_ACCOUNT_UNKNOWN', `local account ${name} has no valid uid/gid in the name service`);
  }
  const refused = refusalOf({ name, uid }, policy);
  if (refused !== undefined) throw ceError('CE_ERR_ACCOUNT_REFUSED', refused);
  const ids = await query('id', ['-G', '--', name]);
  if (ids === undefined) throw ceError('CE_ERR_ACCOUNT_UNKNOWN', `cannot list the groups of local account ${name}`);
  const groups = [...new Set([gid, ...ids.trim().split(/\s+/).filter(Boolean).map(Number)])];
  if (groups.some((g) => !Number.isSafeInteger(g) || g < 0))
    throw ceError('CE_ERR_ACCOUNT_UNKNOWN', `local account ${name} has invalid group ids`);
  return { name, uid, gid, groups, home: f[5] ?? '/' };
}

/** The name of the account of `uid` in the name service, or undefined when it has none. */
export async function accountNameOf(uid: number): Promise<string | undefined> {
  const name = (await query('getent', ['passwd', String(uid)]))?.split('\n')[0]?.split(':')[0];
  return name !== undefined && name !== '' ? name : undefined;
}

/**
 * The gid of `group` (a group name or a numeric gid) as the name service sees it, or
 * undefined when it does not resolve.
 */
export async function lookUpGroup(group: string): Promise<number | undefined> {
  if (!NAME.test(group)) return undefined;
  // name:password:gid:members
  const f = (await query('getent', ['group', group]))?.split('\n')[0]?.split(':');
  const gid = Number(f?.[2]);
  return f !== undefined && f.length >= 3 && f[2] !== '' && Number.isSafeInteger(gid) && gid >= 0 ? gid : undefined;
}

interface Entry {
  readonly at: number;
  readonly account: Promise<LocalAccount>;
}

/** `lookUpAccount` behind a cache of `ttlMs`; failures are not kept (the site may be adding the account). */
export class AccountResolver {
  readonly #cache = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly policy: AccountPolicy = ROOT_ONLY_POLICY,
  ) {}

  resolve(name: string): Promise<LocalAccount> {
    const now = Date.now();
    const hit = this.#cache.get(name);
    if (hit && now - hit.at < this.ttlMs) return hit.account;
    const account = lookUpAccount(name, this.policy);
    this.#cache.set(name, { at: now, account });
    account.catch(() => {
      if (this.#cache.get(name)?.account === account) this.#cache.delete(name);
    });
    // Bounded: names come from the mapping, but a long-running service sees many.
    if (this.#cache.size > 10_000)
      for (const [k, v] of this.#cache) if (now - v.at >= this.ttlMs) this.#cache.delete(k);
    return account;
  }
}
