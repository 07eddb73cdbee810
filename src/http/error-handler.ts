/**
 * The one place that turns errors into responses. A CeError keeps its catalog status
 * and message (also used as the reason phrase, where A-REX puts its texts); anything
 * else is a 500 whose details go to the log only, never to the client.
 * Body: a short document in the negotiated format:
 *   <error><status-code>404</status-code><code>CE_ERR_..</code><reason>..</reason></error>
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { el } from '../doc/element.js';
import { isCeError } from '../errors/ce-error.js';
import { catalog } from '../errors/catalog.js';
import { negotiate } from './negotiate.js';
import { sendDoc } from './send.js';

export function errorDocument(status: number, code: string, reason: string) {
  return el('error', [el('status-code', String(status)), el('code', code), el('reason', reason)]);
}

export function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const format = negotiate(request.headers.accept);
  if (isCeError(err)) {
    if (err.statusCode >= 500) request.log.error({ err, code: err.code }, 'request failed');
    else request.log.info({ code: err.code, status: err.statusCode, reason: err.message }, 'request refused');
    for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
    return sendDoc(
      reply,
      format,
      err.statusCode,
      errorDocument(err.statusCode, err.code, err.message),
      [],
      err.message,
    );
  }
  // Fastify's own client errors (malformed headers, body size, bad content) are 4xx.
  const fe = err as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code = fe.statusCode === 413 ? 'CE_ERR_HTTP_BODY_TOO_LARGE' : 'CE_ERR_HTTP_BAD_REQUEST';
    const msg = catalog[code].message;
    request.log.info({ status: fe.statusCode, fastifyCode: fe.code }, 'request refused by the HTTP layer');
    return sendDoc(reply, format, fe.statusCode, errorDocument(fe.statusCode, code, msg), [], msg);
  }
  request.log.error({ err }, 'unexpected error');
  const msg = catalog.CE_ERR_INTERNAL.message;
  return sendDoc(reply, format, 500, errorDocument(500, 'CE_ERR_INTERNAL', msg), [], msg);
}
