/**
 * The configuration as the running service sees it, and what a reload (SIGHUP) may
 * change. Components are given `view`, which always reads the current object; a reload
 * replaces only the RELOADABLE keys (the rest keeps its start-up value, and a change to
 * it is reported as needing a restart), so a component that copied a non-reloadable
 * value at start stays consistent with what the view says.
 *
 * Every reload also rebuilds the authorizer, which re-reads the grid-mapfiles, and looks at
 * the VOMS directory again. The `authorization` and `mapping` sections themselves are not
 * reloadable: a mapping to local accounts is checked at start (accounts exist, the service
 * may switch to them, session modes) and a reload would skip those checks.
 *
 * Reloadable, because every reader looks them up per use (or is rebuilt on reload):
 *   cluster.queues, cluster.defaultQueue      submissions, info document, authorization (the
 *                                             new queues must fit the running authorization section)
 *   jobs.maxActiveJobsPerUser, jobs.maxDescriptionBytes, jobs.maxDescriptionsPerRequest
 *   engine.maxActiveJobs, maxPreparingJobs, maxRunningJobs, maxFinishingJobs,
 *          maxJobsPerUser, maxRunningJobsPerUser   (a raised limit admits waiting jobs at the next job event)
 *   disk                                      low-water marks and check interval
 *   routes, fairShare                         new submissions take the new routes (jobs already
 *                                             routed keep their route's name and batch settings);
 *                                             the engine's limits and shares hold at once
 */
import type { Config } from '../config/schema.js';
import { deepFreeze } from '../config/load.js';

export const RELOADABLE: readonly string[] = [
  'cluster.queues',
  'cluster.defaultQueue',
  'jobs.maxActiveJobsPerUser',
  'jobs.maxDescriptionBytes',
  'jobs.maxDescriptionsPerRequest',
  'engine.maxActiveJobs',
  'engine.maxPreparingJobs',
  'engine.maxRunningJobs',
  'engine.maxFinishingJobs',
  'engine.maxJobsPerUser',
  'engine.maxRunningJobsPerUser',
  'disk',
  'routes',
  'fairShare',
];

export interface ReloadPlan {
  /** Changed keys that take effect. */
  readonly applied: readonly string[];
  /** Changed keys that need a restart (kept at their running value). */
  readonly ignored: readonly string[];
  readonly merged: Config;
}

export class LiveConfig {
  #current: Config;
  readonly view: Config;

  constructor(initial: Config) {
    this.#current = initial;
    const cur = (): Record<string | symbol, unknown> => this.#current;
    this.view = new Proxy({} as Config, {
      get: (_t, k) => cur()[k],
      has: (_t, k) => k in cur(),
      ownKeys: () => Reflect.ownKeys(cur()),
      getOwnPropertyDescriptor: (_t, k) => {
        const d = Reflect.getOwnPropertyDescriptor(cur(), k);
        return d === undefined ? undefined : { ...d, configurable: true };
      },
    });
  }

  get current(): Config {
    return this.#current;
  }

  /** Compare `next` (a validated configuration) with the running one. */
  plan(next: Config): ReloadPlan {
    const changed = changedKeys(this.#current, next, '');
    const applied: string[] = [];
    const ignored: string[] = [];
    const merged = structuredClone(this.#current) as unknown as Record<string, unknown>;
    for (const k of changed) (RELOADABLE.some((r) => k === r || k.startsWith(`${r}.`)) ? applied : ignored).push(k);
    for (const r of RELOADABLE) setPath(merged, r, getPath(next, r));
    return { applied, ignored, merged: deepFreeze(merged) as unknown as Config };
  }

  apply(plan: ReloadPlan): void {
    this.#current = plan.merged;
  }
}

/** Dotted keys whose values differ (arrays compared whole). */
function changedKeys(a: unknown, b: unknown, prefix: string): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => changedKeys(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function getPath(o: unknown, path: string): unknown {
  let v: unknown = o;
  for (const k of path.split('.')) v = isPlainObject(v) ? v[k] : undefined;
  return v;
}

function setPath(o: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let t = o;
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(t[k])) t[k] = {};
    t = t[k] as Record<string, unknown>;
  }
  const last = keys[keys.length - 1] as string;
  if (value === undefined) delete t[last];
  else t[last] = structuredClone(value);
}
