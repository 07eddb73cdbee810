/**
 * Load-time checks of the authorization and mapping configuration that the schema
 * cannot express: one key per match rule and mapping entry, group names defined once
 * and every reference to a group defined, an account in one pool only, valid patterns.
 * Returns the first problem (the config loader turns it into a ConfigError naming the key).
 */
import { resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { parseFqanPattern } from './fqan.js';

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
  for (const [i, q] of cfg.cluster.queues.entries()) {
    for (const [j, name] of (q.allow ?? []).entries())
      if (!names.has(name)) return unknown(`cluster.queues.${i}.allow.${j}`, name);
  }
  return undefined;
}

/** The authorization and mapping sections with grid-mapfile paths resolved against `base` (the config file's folder). */
export function resolveAuthorizationPaths(cfg: Config, base: string): Pick<Config, 'authorization' | 'mapping'> {
  const authorization =
    cfg.authorization === undefined
      ? undefined
      : {
          ...cfg.authorization,
          groups: cfg.authorization.groups.map((g) => ({
            ...g,
            match: g.match.map((r) =>
              r.gridMapFile === undefined ? r : { ...r, gridMapFile: resolve(base, r.gridMapFile) },
            ),
          })),
        };
  const mapping = cfg.mapping.map((m) =>
    m.gridMapFile === undefined ? m : { ...m, gridMapFile: resolve(base, m.gridMapFile) },
  );
  return authorization === undefined ? { mapping } : { authorization, mapping };
}
