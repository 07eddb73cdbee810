/**
 * A route's waiting limits at submission (docs/routes.md, "Limits and fair share"):
 * `maxWaiting`, the most jobs of the route accepted and not yet in the batch system
 * (BEFORE_BATCH_STATES, pending or not), and `maxWaitingPerVo`, the most of one VO (its
 * first FQAN's) within it. Past either, a new job of the route is refused as its own item
 * with 503 `No more jobs allowed: ...` (CE_ERR_JOB_ROUTE_FULL), as the per-user job
 * limit answers: a full route is a temporary condition, the same description fits
 * later. Nothing is made for a refused item; the job is never accepted and then dropped.
 *
 * Cost: the stored jobs of a route are counted once per request (one statement over the
 * route's own jobs, by index), not per item. Jobs of concurrent submissions that are
 * being stored are counted through `inFlight`, which the submission fills synchronously
 * after its checks (no await in between), so two submissions never both take the last
 * place. A reason names the route, the limit and its value, and the caller's own VO:
 * counts only, never another user's job or identity.
 */
import type { Route } from './routes.js';
import type { ItemFailure } from './ports.js';
import type { JobStore } from '../store/job-store.js';
import { BEFORE_BATCH_STATES } from '../vocabulary/job-states.js';
import { voOf } from '../engine/scheduler/share-chooser.js';

const SEP = '\u0000';
const routeKey = (route: string): string => `r${SEP}${route}`;
const voKey = (route: string, vo: string): string => `v${SEP}${route}${SEP}${vo}`;

/** Whether a route has a waiting limit (else nothing is counted for it). */
export function hasWaitingLimit(route: Route): boolean {
  return route.maxWaiting !== undefined || route.maxWaitingPerVo !== undefined;
}

/** One request's view of the routes' waiting jobs: read once per route, then counted up as items are taken. */
export class RouteWaiting {
  readonly #store: Pick<JobStore, 'routeCountsByFqan'>;
  readonly #inFlight: ReadonlyMap<string, number>;
  /** Per route: its stored waiting jobs per VO. */
  readonly #stored = new Map<string, Map<string, number>>();
  /** What this request has taken so far, per key. */
  readonly taken = new Map<string, number>();

  constructor(store: Pick<JobStore, 'routeCountsByFqan'>, inFlight: ReadonlyMap<string, number>) {
    this.#store = store;
    this.#inFlight = inFlight;
  }

  #perVo(route: string): Map<string, number> {
    let m = this.#stored.get(route);
    if (m === undefined) {
      m = new Map();
      for (const [fqan, n] of this.#store.routeCountsByFqan(route, BEFORE_BATCH_STATES)) {
        const vo = voOf(fqan);
        m.set(vo, (m.get(vo) ?? 0) + n);
      }
      this.#stored.set(route, m);
    }
    return m;
  }

  #waiting(key: string, stored: number): number {
    return stored + (this.#inFlight.get(key) ?? 0) + (this.taken.get(key) ?? 0);
  }

  /**
   * Takes up to `want` places for jobs of `vo` in `route` (at least `least` of them): the
   * number taken, or the 503 item naming the limit that is reached.
   */
  take(route: Route, vo: string, want: number, least = want): { readonly ok: true; readonly n: number } | ItemFailure {
    if (!hasWaitingLimit(route)) return { ok: true, n: want };
    const perVo = this.#perVo(route.name);
    let total = 0;
    for (const n of perVo.values()) total += n;
    const inRoute = this.#waiting(routeKey(route.name), total);
    const ofVo = this.#waiting(voKey(route.name, vo), perVo.get(vo) ?? 0);
    const roomRoute = route.maxWaiting === undefined ? Infinity : route.maxWaiting - inRoute;
    const roomVo = route.maxWaitingPerVo === undefined ? Infinity : route.maxWaitingPerVo - ofVo;
    const n = Math.min(want, roomRoute, roomVo);
    if (n < least || n <= 0) {
      const reason =
        roomRoute <= roomVo
          ? `No more jobs allowed: route ${route.name} maxWaiting ${route.maxWaiting} reached (${inRoute} waiting)`
          : `No more jobs allowed: route ${route.name} maxWaitingPerVo ${route.maxWaitingPerVo} reached for VO ${vo || '(none)'} (${ofVo} waiting)`;
      return { ok: false, status: 503, code: 'CE_ERR_JOB_ROUTE_FULL', reason };
    }
    for (const k of [routeKey(route.name), voKey(route.name, vo)]) this.taken.set(k, (this.taken.get(k) ?? 0) + n);
    return { ok: true, n };
  }
}

/** Adds (+1) or removes (-1) a request's places to the jobs being stored. */
export function addInFlight(inFlight: Map<string, number>, taken: ReadonlyMap<string, number>, by: 1 | -1): void {
  for (const [k, n] of taken) {
    const left = (inFlight.get(k) ?? 0) + by * n;
    if (left > 0) inFlight.set(k, left);
    else inFlight.delete(k);
  }
}

/** A limit of the routes that makes no sense, under its configuration key (`config check`: warnings). */
export interface RouteLimitProblem {
  readonly key: string;
  readonly message: string;
  readonly warning: true;
}

/**
 * Limits that can never hold and shares that name nothing: a per-VO limit above its
 * route's limit, a route's running limit above the service's (engine.maxRunningJobs),
 * and with `fairShare.by` `route` a share for a route that is not configured. Warnings:
 * the service runs, but not as the administrator meant.
 */
export function routeLimitProblems(c: {
  readonly routes: readonly Route[];
  readonly engine: { readonly maxRunningJobs: number };
  readonly fairShare: { readonly by: string; readonly shares: Readonly<Record<string, number>> };
}): RouteLimitProblem[] {
  const out: RouteLimitProblem[] = [];
  const never = (key: string, message: string): void => void out.push({ key, message, warning: true });
  c.routes.forEach((r, i) => {
    for (const [perVo, total] of [
      ['maxWaitingPerVo', 'maxWaiting'],
      ['maxRunningPerVo', 'maxRunning'],
    ] as const) {
      const v = r[perVo];
      const t = r[total];
      if (v !== undefined && t !== undefined && v > t)
        never(`routes.${i}.${perVo}`, `route ${r.name}: ${perVo} ${v} above ${total} ${t} is never reached`);
    }
    const most = c.engine.maxRunningJobs;
    if (most > 0 && r.maxRunning !== undefined && r.maxRunning > most)
      never(
        `routes.${i}.maxRunning`,
        `route ${r.name}: maxRunning ${r.maxRunning} above engine.maxRunningJobs ${most} is never reached`,
      );
  });
  if (c.fairShare.by === 'route')
    for (const name of Object.keys(c.fairShare.shares))
      if (!c.routes.some((r) => r.name === name))
        never(`fairShare.shares.${name}`, `fairShare.shares names ${name}, which is no configured route`);
  return out;
}
