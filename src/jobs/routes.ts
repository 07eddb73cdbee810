/**
 * Routes (docs/routes.md): the configured, ordered list that sends each job to its batch
 * partition, account and QoS. The first route whose every condition holds takes the job;
 * a route's conditions read only what is known at submission (the caller's groups, FQANs
 * and token, the job's queue and request). Pure: no I/O, so the dry run
 * (`ceres admin route`) and the submission decide alike.
 */
import type { Route } from '../config/sections/routes.js';
import type { JobDescription } from '../vocabulary/job-description.js';
import type { StoredRoute } from '../store/job-fields.js';
import { fqanMatches, parseFqanPattern, type Fqan } from '../auth/voms/fqan.js';

export type { Route };

/** What a route may match on, gathered at submission. */
export interface RouteFacts {
  readonly groups: readonly string[];
  readonly fqans: readonly string[];
  readonly tokenGroups: readonly string[];
  readonly tokenScopes: readonly string[];
  /** The job's queue after the acceptance checks (the default applied). */
  readonly queue: string;
  readonly slots: number;
  readonly memoryBytes?: number | undefined;
  readonly wallTimeSeconds?: number | undefined;
  readonly runtimeEnvironments: readonly string[];
}

/**
 * What a routed job keeps (job-fields.ts `route`): the route's name and its batch settings
 * as they were at submission, so a reload that edits or removes the route leaves the
 * job where it was sent.
 */
export type JobRoute = StoredRoute;

export interface RouteDecision {
  /** The route taken; absent: none matched. */
  readonly route?: Route;
  /** For each route before the one taken (all of them when none matched), why it did not match. */
  readonly misses: readonly { readonly name: string; readonly why: string }[];
}

/** The facts of one accepted description and its caller. */
export function routeFacts(
  desc: JobDescription,
  caller: {
    groups?: readonly string[];
    fqans?: readonly string[];
    tokenGroups?: readonly string[];
    tokenScopes?: readonly string[];
  },
): RouteFacts {
  return {
    groups: caller.groups ?? [],
    fqans: caller.fqans ?? [],
    tokenGroups: caller.tokenGroups ?? [],
    tokenScopes: caller.tokenScopes ?? [],
    queue: desc.queue ?? '',
    slots: desc.count ?? 1,
    memoryBytes: desc.memoryBytes,
    wallTimeSeconds: desc.wallTimeSeconds,
    runtimeEnvironments: desc.runtimeEnvironments.map((r) => r.name),
  };
}

const oneOf = (what: string, wanted: readonly string[] | undefined, have: readonly string[]): string | undefined =>
  wanted === undefined || wanted.some((w) => have.includes(w))
    ? undefined
    : `${what} ${have.length > 0 ? have.join(', ') : '(none)'} not among ${wanted.join(', ')}`;

/**
 * FQAN rules and the callers' FQANs are parsed once per distinct text (the schema checked
 * rules start with '/'): a bulk submission matches every description against the routes,
 * and parsing the same caller's FQANs again per job and route was most of a routed job's
 * matching cost. The cache is bounded, so distinct texts from hostile callers cannot grow it.
 */
const parsedRules = new Map<string, Fqan | string>();
function rule(text: string): Fqan | string {
  let r = parsedRules.get(text);
  if (r === undefined) {
    r = parseFqanPattern(text);
    if (parsedRules.size < 10_000) parsedRules.set(text, r);
  }
  return r;
}

function fqanMiss(wanted: readonly string[] | undefined, have: readonly string[]): string | undefined {
  if (wanted === undefined) return undefined;
  const held = have.map(rule).filter((f): f is Fqan => typeof f !== 'string');
  const ok = wanted.some((w) => {
    const r = rule(w);
    return typeof r !== 'string' && held.some((f) => fqanMatches(r, f));
  });
  return ok ? undefined : `FQANs ${have.length > 0 ? have.join(', ') : '(none)'} match none of ${wanted.join(', ')}`;
}

/** Why `route` does not take a job with `facts`; undefined: it does. */
export function routeMiss(route: Route, facts: RouteFacts): string | undefined {
  const m = route.match;
  const checks: (() => string | undefined)[] = [
    () => oneOf('groups', m.groups, facts.groups),
    () => fqanMiss(m.fqans, facts.fqans),
    () => oneOf('token groups', m.tokenGroups, facts.tokenGroups),
    () => oneOf('token scopes', m.tokenScopes, facts.tokenScopes),
    () => oneOf('queue', m.queues, [facts.queue]),
    () => oneOf('runtime environments', m.runtimeEnvironments, facts.runtimeEnvironments),
    () => (m.minSlots !== undefined && facts.slots < m.minSlots ? `${facts.slots} slots < ${m.minSlots}` : undefined),
    () => (m.maxSlots !== undefined && facts.slots > m.maxSlots ? `${facts.slots} slots > ${m.maxSlots}` : undefined),
    () =>
      m.maxMemoryBytes !== undefined && facts.memoryBytes !== undefined && facts.memoryBytes > m.maxMemoryBytes
        ? `memory ${facts.memoryBytes} B > ${m.maxMemoryBytes} B`
        : undefined,
    () =>
      // A job naming no wall time could run as long as the batch system allows: it is not
      // known to fit a route for short jobs.
      m.maxWallTimeSeconds === undefined
        ? undefined
        : facts.wallTimeSeconds === undefined
          ? `no wall time asked (at most ${m.maxWallTimeSeconds} s)`
          : facts.wallTimeSeconds > m.maxWallTimeSeconds
            ? `wall time ${facts.wallTimeSeconds} s > ${m.maxWallTimeSeconds} s`
            : undefined,
  ];
  for (const c of checks) {
    const why = c();
    if (why !== undefined) return why;
  }
  return undefined;
}

/** The first route that takes the job, and why each one before it did not. */
export function chooseRoute(routes: readonly Route[], facts: RouteFacts): RouteDecision {
  const misses: { name: string; why: string }[] = [];
  for (const route of routes) {
    const why = routeMiss(route, facts);
    if (why === undefined) return { route, misses };
    misses.push({ name: route.name, why });
  }
  return { misses };
}

/** What a job taking `route` keeps (see JobRoute). */
export function jobRoute(route: Route): JobRoute {
  return {
    name: route.name,
    ...(route.partition !== undefined ? { partition: route.partition } : {}),
    ...(route.account !== undefined ? { account: route.account } : {}),
    ...(route.qos !== undefined ? { qos: route.qos } : {}),
    ...(route.extraBatchArgs !== undefined && route.extraBatchArgs.length > 0
      ? { extraArgs: route.extraBatchArgs }
      : {}),
  };
}

/**
 * The configured routes in order, for the publishers (the information system publishes
 * each route as a share): the one place that lists them.
 */
export function listRoutes(config: { readonly routes: readonly Route[] }): readonly Route[] {
  return config.routes;
}

/** Whether a route matches every job (no condition): the routes after it are unreachable. */
export function isCatchAll(route: Route): boolean {
  return Object.values(route.match).every((v) => v === undefined);
}

/** A mistake in the routes, under the configuration key that causes it (`config check`). */
export interface RouteProblem {
  readonly key: string;
  readonly message: string;
  readonly warning?: true;
}

/**
 * What `config check` finds in the routes: a name used twice (a stored route must name
 * one), a queue condition naming no configured queue (the condition can never hold), and
 * a route after one that takes every job (it is never reached).
 */
export function routeProblems(routes: readonly Route[], queues: readonly string[]): RouteProblem[] {
  const out: RouteProblem[] = [];
  const seen = new Set<string>();
  let catchAll: string | undefined;
  routes.forEach((r, i) => {
    if (seen.has(r.name)) out.push({ key: `routes.${i}.name`, message: `route name ${r.name} is used twice` });
    seen.add(r.name);
    for (const q of r.match.queues ?? [])
      if (!queues.includes(q))
        out.push({ key: `routes.${i}.match.queues`, message: `route ${r.name}: ${q} is no configured queue` });
    if (catchAll !== undefined)
      out.push({
        key: `routes.${i}`,
        message: `route ${r.name} is never reached: route ${catchAll} before it takes every job`,
        warning: true,
      });
    else if (isCatchAll(r)) catchAll = r.name;
  });
  return out;
}
