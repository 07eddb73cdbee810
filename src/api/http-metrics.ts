/**
 * HTTP metrics: every answered request counted by route TEMPLATE (never the raw path:
 * job ids and file names would make the series unbounded), method and status, timed,
 * and refusals counted by catalog code. The REST tree is one catch-all route, so its
 * template comes from the REST router itself, run again on the parsed target.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isCeError } from '../errors/ce-error.js';
import { parseTarget } from '../http/query.js';
import { route, type RestRoutes } from './rest/router.js';
import type { Resource } from './rest/resource.js';
import type { Metrics } from '../metrics/instruments.js';
import { METHODS } from './app.js';

const TEMPLATES: Record<keyof RestRoutes, string> = {
  versions: '/rest',
  info: '/rest/{version}/info',
  jobs: '/rest/{version}/jobs',
  session: '/rest/{version}/jobs/{id}/session/*',
  diagnose: '/rest/{version}/jobs/{id}/diagnose/{name}',
  delegations: '/rest/{version}/delegations',
  delegation: '/rest/{version}/delegations/{id}',
};
// The methods the REST tree routes (app.ts); any other is counted as OTHER (bounded labels).
const KNOWN_METHODS = new Set<string>(METHODS);

export interface HttpMetricsOptions {
  /** `{mountPoint}/rest`: the REST tree's catch-all routes. */
  readonly restPrefix: string;
  readonly routes: RestRoutes;
}

export function instrumentHttp(app: FastifyInstance, m: Metrics, o: HttpMetricsOptions): void {
  const names = new Map<Resource, string>(
    Object.entries(o.routes).map(([k, r]) => [r as Resource, TEMPLATES[k as keyof RestRoutes]]),
  );
  const codes = new WeakMap<FastifyRequest, string>();
  const templateOf = (request: FastifyRequest): string => {
    const url = request.routeOptions.url;
    if (url === undefined) return 'unrouted';
    if (url !== o.restPrefix && url !== `${o.restPrefix}/*`) return url;
    const below = parseTarget(request.url).path.slice(o.restPrefix.length);
    try {
      return names.get(route(o.routes, below === '' ? [] : below.slice(1).split('/')).resource) ?? '/rest/other';
    } catch {
      return '/rest/unmatched';
    }
  };
  app.addHook('onError', async (request, _reply, err) => {
    if (isCeError(err)) codes.set(request, err.code);
  });
  app.addHook('onResponse', async (request, reply) => {
    const routeLabel = templateOf(request);
    const method = KNOWN_METHODS.has(request.method) ? request.method : 'OTHER';
    m.httpRequests.inc({ route: routeLabel, method, status: String(reply.statusCode) });
    m.httpDuration.observe({ route: routeLabel, method }, reply.elapsedTime / 1000);
    const code = codes.get(request);
    if (code !== undefined) m.refusals.inc({ route: routeLabel, code });
  });
}
