/**
 * Load-time checks of the authorization and mapping configuration that the schema
 * cannot express: one key per match rule and mapping entry, group names defined once
 * and every reference to a group defined, an account in one pool only, valid patterns.
 * Returns the first problem (the config loader turns it into a ConfigError naming the key).
 */
import type { Config } from './schema.js';
import { parseFqanPattern } from '../auth/voms/fqan.js';

export interface ConfigProblem {
  readonly key: string;
  readonly message: string;
}

const RULE_KEYS = ['all', 'subject', 'subjectPattern', 'issuer', 'gridMapFile', 'voms', 'token'] as const;
const MAPPING_KEYS = ['gridMapFile', 'account', 'pool'] as const;

export function checkAuthorizationConfig(cfg: Config): ConfigProblem | undefined {
  const a = cfg.authorization;
  const names = new Set<string>();
  const unknown = (key: string, name: string): ConfigProblem => ({
    key,
    message:
      a === undefined
        ? `names group '${name}', but there is no authorization section to define groups`
        : `unknown authorization group '${name}' (defined: ${[...names].join(', ')})`,
  });
  if (a !== undefined) {
    for (const [i, g] of a.groups.entries()) {
      if (names.has(g.name))
        return { key: `authorization.groups.${i}.name`, message: `duplicate group name '${g.name}'` };
      names.add(g.name);
      for (const [j, r] of g.match.entries()) {
        const key = `authorization.groups.${i}.match.${j}`;
        const set = RULE_KEYS.filter((k) => (r as Record<string, unknown>)[k] !== undefined);
        if (set.length !== 1)
          return {
            key,
            message: `a match rule has exactly one of ${RULE_KEYS.join(', ')} (found ${set.length === 0 ? 'none' : set.join(', ')})`,
          };
        if (r.voms !== undefined) {
          const p = parseFqanPattern(r.voms);
          if (typeof p === 'string') return { key: `${key}.voms`, message: p };
        }
      }
    }
    for (const [i, name] of a.allow.entries()) if (!names.has(name)) return unknown(`authorization.allow.${i}`, name);
    for (const [i, m] of (a.monitors ?? []).entries())
      if (!names.has(m.group)) return unknown(`authorization.monitors.${i}.group`, m.group);
  }
  const pooled = new Map<string, number>();
  for (const [i, m] of cfg.mapping.entries()) {
    if (!names.has(m.group)) return unknown(`mapping.${i}.group`, m.group);
    const set = MAPPING_KEYS.filter((k) => m[k] !== undefined);
    if (set.length !== 1)
      return {
        key: `mapping.${i}`,
        message: `a mapping entry has exactly one of ${MAPPING_KEYS.join(', ')} (found ${set.length === 0 ? 'none' : set.join(', ')})`,
      };
    for (const acct of m.pool?.accounts ?? []) {
      const other = pooled.get(acct);
      if (other !== undefined)
        return {
          key: `mapping.${i}.pool.accounts`,
          message: `account '${acct}' is already in the pool of mapping.${other}: a pool account can be leased by one pool only`,
        };
      pooled.set(acct, i);
    }
  }
  const shared = sharingProblem(cfg, pooled);
  if (shared !== undefined) return shared;
  for (const [i, q] of cfg.cluster.queues.entries()) {
    for (const [j, name] of (q.allow ?? []).entries())
      if (!names.has(name)) return unknown(`cluster.queues.${i}.allow.${j}`, name);
  }
  return undefined;
}

/**
 * Can the callers a group matches be only one identity? One rule naming one certificate
 * subject exactly, or one token subject of one issuer.
 */
function singleIdentity(cfg: Config, group: string): boolean {
  const rules = cfg.authorization?.groups.find((g) => g.name === group)?.match ?? [];
  const r = rules[0];
  return rules.length === 1 && r !== undefined && (r.subject !== undefined || r.token?.subject !== undefined);
}

/**
 * Identities mapped to one fixed account are one Unix user: each reads what the others'
 * jobs leave, their delegated credentials included. A fixed account that more than one
 * identity can reach (a group that can match several callers, or the account in two
 * entries) must be declared in `accounts.shared`; a pool account is never also fixed.
 */
function sharingProblem(cfg: Config, pooled: ReadonlyMap<string, number>): ConfigProblem | undefined {
  const declared = new Set(cfg.accounts.shared);
  const uses = new Map<string, { first: number; count: number }>();
  for (const [i, m] of cfg.mapping.entries()) {
    if (m.account === undefined) continue;
    const key = `mapping.${i}.account`;
    const pool = pooled.get(m.account);
    if (pool !== undefined)
      return {
        key,
        message: `account '${m.account}' is also in the pool of mapping.${pool}: a pool account is leased to one identity at a time and cannot also be a fixed account`,
      };
    const u = uses.get(m.account) ?? { first: i, count: 0 };
    u.count += singleIdentity(cfg, m.group) ? 1 : 2;
    uses.set(m.account, u);
  }
  for (const [account, u] of uses) {
    if (u.count < 2 || declared.has(account)) continue;
    return {
      key: `mapping.${u.first}.account`,
      message: `fixed account '${account}' would be shared by more than one identity (its group can match several callers, or several entries name it): identities that share an account are one Unix user and can read each other's jobs and delegated credentials; list it in accounts.shared if that is intended`,
    };
  }
  return undefined;
}
