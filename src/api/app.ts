/**
 * Builds the REST application (a Fastify instance) and never listens: the composition
 * root (src/service/start.ts) owns sockets and TLS, the `serve` command (src/cli) the
 * signals; tests call `inject` or listen on port 0.
 *
 * Request flow:
 *   TLS connection (client chain verified once per connection, src/auth)
 *     -> rewriteUrl (absolute-form targets reduced to path; doubled slashes of the
 *        route part collapsed, http/route-slashes.ts)
 *     -> onRequest: cross-site refusal (http/cross-site.ts), per-identity caps (http/fairness.ts)
 *     -> catch-all route under {mount}/rest: parse target, route (api/rest/router.ts)
 *     -> resource method table (405 + Allow when absent), caller check
 *     -> handler (domain services) -> document -> negotiated rendering (http/send.ts)
 *     -> errors from anywhere -> http/error-handler.ts
 *
 * Bodies are never parsed by Fastify: a catch-all content-type parser leaves the
 * stream untouched, so handlers stream uploads to disk and sniff job descriptions
 * by content (clients send wrong or missing Content-Types; docs/compatibility.md).
 */
import type { IncomingMessage } from 'node:http';
import { Server as TlsServer } from 'node:tls';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { ceError } from '../errors/ce-error.js';
import { negotiate } from '../http/negotiate.js';
import { parseTarget, stripAbsoluteForm } from '../http/query.js';
import { handleError } from '../http/error-handler.js';
import type { Authenticator, Authorizer, Caller, CallerResult } from '../http/caller.js';
import { route, type RestRoutes } from './rest/router.js';
import { allowHeader, type RestRequest } from './rest/resource.js';
import { operationOf } from './rest/operation.js';
import { withoutQueryToken } from '../auth/token/bearer-header.js';
import { collapseRouteSlashes } from '../http/route-slashes.js';
import { crossSiteRefusal } from '../http/cross-site.js';
import { newRequestId } from '../http/request-id.js';
import { holdInFlight, overConnectionLimit, OVER_LIMIT_GRACE_MS, PerKeyCounter } from '../http/fairness.js';
import { GracefulClose } from '../http/graceful-close.js';

/** Every method routed to the REST tree; those a resource lacks get 405 + Allow. */
export const METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'PROPFIND',
  'MKCOL',
  'COPY',
  'MOVE',
  'PROPPATCH',
  'LOCK',
  'UNLOCK',
  'TRACE',
] as const;

export interface AppOptions {
  mountPoint: string;
  routes: RestRoutes;
  authenticate: Authenticator;
  /** Authorization of the caller of a non-public resource (absent: every authenticated caller). */
  authorize?: Authorizer;
  logger: FastifyBaseLogger;
  /** Extra Fastify options (e.g. `https` from server.ts). */
  fastify?: Partial<FastifyServerOptions> & Record<string, unknown>;
  /** External origin used for absolute URLs in answers (PROPFIND hrefs), e.g. https://host:port */
  origin: () => string;
  /** The configured public service URL, if any: its origin also counts as this service's. */
  publicUrl?: string | undefined;
  /** Per-identity cap on requests in progress (http/fairness.ts); none when absent. */
  fairness?: { readonly maxRequestsPerIdentity: number; readonly keyOf: (req: IncomingMessage) => string };
}

/**
 * The origin the client addressed (from Host), so absolute URLs we hand back (PROPFIND
 * hrefs) start with exactly the prefix the client used: arcget strips its own listing
 * URL from each href. A Host that is not a plain host[:port] falls back to the configured one.
 */
function originOf(host: string | undefined, fallback: () => string): string {
  if (
    host !== undefined &&
    host.length <= 261 &&
    /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host)
  )
    return `https://${host}`;
  return fallback();
}

/**
 * Refusals answered before the body is read close the connection when a body follows:
 * Node would otherwise read (and discard) a whole upload to keep the connection.
 */
function closeIfBody(request: FastifyRequest): { headers: Record<string, string> } {
  const h = request.headers;
  const hasBody =
    h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
  return { headers: hasBody ? { connection: 'close' } : {} };
}

export function buildApp(opts: AppOptions): FastifyInstance {
  const prefix = `${opts.mountPoint}/rest`;
  const prefixSegments = prefix.split('/').filter((x) => x !== '').length;
  const publicOrigin = opts.publicUrl === undefined ? undefined : new URL(opts.publicUrl).origin;
  const inFlight = opts.fairness === undefined ? undefined : new PerKeyCounter(opts.fairness.maxRequestsPerIdentity);
  const app = Fastify({
    loggerInstance: opts.logger,
    // Our own one-line access log (onResponse hook) replaces Fastify's two lines.
    logController: new LogController({ disableRequestLogging: true }),
    exposeHeadRoutes: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    bodyLimit: 1024 * 1024 * 1024 * 1024,
    genReqId: newRequestId,
    requestIdHeader: false,
    rewriteUrl: (req) => collapseRouteSlashes(stripAbsoluteForm(req.url ?? '/'), prefixSegments),
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 2000 },
    // Malformed URLs and headers rejected by the router still answer through our handler.
    frameworkErrors: (error: Error, req: FastifyRequest, reply: FastifyReply) => {
      // handleError sends the answer; the reply it returns is thenable only for async
      // handlers, and nothing here waits for it.
      void handleError(ceError('CE_ERR_HTTP_BAD_REQUEST', 'malformed request target', { cause: error }), req, reply);
    },
    ...(opts.fastify ?? {}),
  } as FastifyServerOptions) as unknown as FastifyInstance;

  for (const m of ['PROPFIND', 'MKCOL', 'COPY', 'MOVE', 'PROPPATCH', 'LOCK', 'UNLOCK']) {
    if (!app.supportedMethods.includes(m)) app.addHttpMethod(m, { hasBody: true });
  }
  app.removeAllContentTypeParsers();
  // Leave every body as an unread stream for the handler.
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => handleError(ceError('CE_ERR_HTTP_NOT_FOUND'), request, reply));
  // The access line names who called from where (docs/operations.md, docs/security.md):
  // the verified identity (cached per connection, so asking again is a map lookup) and
  // the peer address, taken when the request arrived (a closed socket forgets it).
  const remotes = new WeakMap<FastifyRequest, string>();
  const callers = new WeakMap<FastifyRequest, string>();
  // One onRequest hook (each hook is a promise and a step of Fastify's hook runner per request).
  app.addHook('onRequest', async (request, reply) => {
    // First, so that a request refused below still has its peer in the access line.
    const remote = request.raw.socket.remoteAddress;
    if (remote !== undefined) remotes.set(request, remote);
    void reply.header('x-request-id', request.id);
    // Handlers judge bodies by content, never by media type, and clients send broken
    // ones (DIRAC: `x-pem-file`, others an empty header): move an unparsable
    // Content-Type aside so the framework does not refuse the request with a 415.
    const ct = request.headers['content-type'];
    if (ct !== undefined && !/^[^\s/;]+\/[^\s/;]+/.test(ct.trim())) delete request.headers['content-type'];
    const origin = request.headers.origin;
    const crossSite = crossSiteRefusal({
      method: request.method,
      secFetchSite: request.headers['sec-fetch-site'],
      origin,
      // Only compared with an Origin header (browsers); non-browser clients send none.
      ownOrigins:
        origin === undefined
          ? []
          : [
              originOf(request.headers.host, opts.origin),
              opts.origin(),
              ...(publicOrigin === undefined ? [] : [publicOrigin]),
            ],
    });
    if (crossSite !== undefined)
      throw ceError('CE_ERR_HTTP_CROSS_SITE', `Cross-site request refused: ${crossSite}`, closeIfBody(request));
    if (overConnectionLimit(request.raw.socket)) {
      throw ceError('CE_ERR_HTTP_TOO_MANY_CONNECTIONS', undefined, {
        headers: { 'retry-after': String(OVER_LIMIT_GRACE_MS / 1000), connection: 'close' },
      });
    }
    if (inFlight !== undefined && opts.fairness !== undefined) {
      const key = opts.fairness.keyOf(request.raw);
      if (!inFlight.tryTake(key))
        throw ceError('CE_ERR_HTTP_TOO_MANY_REQUESTS', undefined, {
          headers: { 'retry-after': '1', ...closeIfBody(request).headers },
        });
      reply.raw.once(
        'close',
        holdInFlight(request.raw, () => inFlight.give(key)),
      );
    }
  });
  // The access line's fields are the fixed ones below, none of them a path the service's
  // logger redacts (src/process/logger.ts), so redaction never changes it; yet with a
  // wildcard path it clones and walks every line (~10 µs a request). Written through a child
  // without redaction, the request id first as Fastify's per-request child binds it, the
  // line has the same bytes (test/api/access-log.test.ts).
  const accessLog = opts.logger.child({}, { redact: [] });
  // A graceful close waits for the requests in progress, and for nothing else
  // (http/graceful-close.ts).
  const graceful = new GracefulClose();
  if (app.server instanceof TlsServer) graceful.watchHandshakes(app.server);
  app.addHook('preClose', (done) => {
    graceful.begin();
    done();
  });
  app.addHook('onResponse', async (request, reply) => {
    graceful.answered(request.raw);
    // Known from the handler; a request refused before it (404, 405, cross-site) is
    // identified here (per connection cached for certificates).
    let dn = callers.get(request);
    if (dn === undefined) {
      const who = await opts.authenticate(request.raw);
      if (who.ok) dn = who.caller.dn;
    }
    accessLog.info(
      {
        reqId: request.id,
        method: request.method,
        url: withoutQueryToken(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        dn,
        remote: remotes.get(request),
      },
      'request',
    );
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const target = parseTarget(request.url);
    const below = target.path.slice(prefix.length);
    const segments = below === '' ? [] : below.slice(1).split('/');
    const m = route(opts.routes, segments);
    const method = request.method;
    const h = m.resource.methods[method] ?? (method === 'HEAD' ? m.resource.methods.GET : undefined);
    if (!h) throw ceError('CE_ERR_HTTP_METHOD_NOT_ALLOWED', undefined, { headers: { allow: allowHeader(m.resource) } });
    let caller: Caller | undefined;
    // Presented-but-invalid credentials are refused everywhere, public or not;
    // missing credentials only where a caller is needed.
    const r = await opts.authenticate(request.raw);
    if (r.ok) callers.set(request, r.caller.dn);
    const refusal = (x: Extract<CallerResult, { ok: false }>) =>
      ceError(x.code, x.reason, x.headers === undefined ? undefined : { headers: { ...x.headers } });
    if (!r.ok && (r.code !== 'CE_ERR_AUTH_NO_CREDENTIALS' || !m.resource.public)) throw refusal(r);
    const resolveCaller = (): Caller => {
      if (caller) return caller;
      if (!r.ok) throw refusal(r);
      const op = operationOf(opts.routes, m.resource, method, target.query.get('action'));
      return (caller = opts.authorize ? opts.authorize(request.raw, r.caller, op) : r.caller);
    };
    // Authorized before any handler runs: a refused caller reaches no resource, even one
    // whose handler would fail earlier for another reason.
    if (!m.resource.public) resolveCaller();
    const rr: RestRequest = {
      raw: request.raw,
      reply,
      method,
      version: m.version ?? '1.1',
      query: target.query,
      rest: m.rest,
      basePath: `${prefix}/${m.version ?? ''}`,
      requestUrl: originOf(request.headers.host, opts.origin) + target.path,
      format: negotiate(request.headers.accept),
      log: request.log,
      caller: resolveCaller,
    };
    const result = await h(rr);
    return reply.sent ? undefined : result;
  };
  app.route({ method: [...METHODS], url: prefix, handler });
  app.route({ method: [...METHODS], url: `${prefix}/*`, handler });
  return app;
}
