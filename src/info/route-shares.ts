/**
 * The routes (docs/routes.md) as GLUE2 shares: one share per route and Ceres queue it
 * takes jobs from (its `queues` condition, else every configured queue). A client names
 * a queue, never a route: the ARC client submits to the MappingQueue of the share it
 * chose and Ceres routes the job when it arrives, so the share describes where the
 * route's jobs go and whom it takes, it does not choose anything.
 *
 * Whom it takes, as peers publish it: a `basic` MappingPolicy with a rule `vo:NAME` per VO
 * the route's FQAN rules name (ARC), and for rules narrower than a VO (a group, a role) an
 * `org.glite.standard` one with `VOMS:<rule>` (gLite-era BDIIs). The FQAN rules are the
 * route's `fqans`, else the `voms` rules of its `groups`. Conditions that name no VO
 * (tokens, slots, ...) add no rule: like every policy, this advertises, the route decides.
 */
import type { Config } from '../config/schema.js';
import type { Route } from '../config/sections/routes.js';
import { parseFqanPattern } from '../auth/voms/fqan.js';
import type { RouteShareInfo, QueueInfo } from './info-snapshot.js';

/** The batch system's figures of a partition (undefined: it does not say). */
export type PartitionFacts = (partition: string) => Partial<QueueInfo> | undefined;

function fqanRulesOf(route: Route, authorization: Config['authorization']): string[] {
  if (route.match.fqans !== undefined) return [...route.match.fqans];
  const out: string[] = [];
  for (const g of authorization?.groups ?? [])
    if (route.match.groups?.includes(g.name)) for (const r of g.match) if (r.voms !== undefined) out.push(r.voms);
  return out;
}

function policyRules(rules: readonly string[]): { voRules: string[]; fqanRules: string[] } {
  const vos = new Set<string>();
  const narrow = new Set<string>();
  for (const text of rules) {
    const f = parseFqanPattern(text);
    if (typeof f === 'string') continue; // the schema and the authorization checks refused it already
    vos.add(f.groups[0]!);
    if (f.groups.length > 1 || f.role !== undefined || f.capability !== undefined) narrow.add(`VOMS:${text}`);
  }
  return { voRules: [...vos].map((vo) => `vo:${vo}`), fqanRules: [...narrow] };
}

export function routeShares(
  routes: readonly Route[],
  authorization: Config['authorization'],
  queues: readonly string[],
  partitionFacts: PartitionFacts,
): RouteShareInfo[] {
  const out: RouteShareInfo[] = [];
  for (const route of routes) {
    const { voRules, fqanRules } = policyRules(fqanRulesOf(route, authorization));
    const facts = route.partition !== undefined ? partitionFacts(route.partition) : undefined;
    const m = route.match;
    for (const queue of queues) {
      if (m.queues !== undefined && !m.queues.includes(queue)) continue;
      out.push({
        route: route.name,
        queue,
        voRules,
        fqanRules,
        ...(route.partition !== undefined ? { partition: route.partition } : {}),
        ...(route.maxRunning !== undefined ? { maxRunningJobs: route.maxRunning } : {}),
        ...(m.maxWallTimeSeconds !== undefined ? { maxWallTimeSeconds: m.maxWallTimeSeconds } : {}),
        ...(m.maxSlots !== undefined ? { maxSlotsPerJob: m.maxSlots } : {}),
        ...(m.maxMemoryBytes !== undefined ? { maxMemoryBytes: m.maxMemoryBytes } : {}),
        ...(facts?.freeSlots !== undefined ? { freeSlots: facts.freeSlots } : {}),
        ...(facts?.localRunningJobs !== undefined ? { localRunningJobs: facts.localRunningJobs } : {}),
        ...(facts?.localWaitingJobs !== undefined ? { localWaitingJobs: facts.localWaitingJobs } : {}),
        ...(facts?.servingState !== undefined ? { servingState: facts.servingState } : {}),
      });
    }
  }
  return out;
}
