/**
 * The health paths on the main HTTPS port (docs/operations.md, Health): public (a load
 * balancer presents no certificate), outside the REST tree, never cached. A failing
 * check is named here, not explained: the loopback listener gives the reasons.
 */
import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../health/readiness.js';
import { LIVE_BODY, LIVE_PATH, READY_PATH, readyBody } from '../health/answers.js';

export function healthRoutes(app: FastifyInstance, readiness: () => Promise<Readiness>): void {
  const json = { 'content-type': 'application/json', 'cache-control': 'no-store' };
  app.route({
    method: ['GET', 'HEAD'],
    url: LIVE_PATH,
    handler: (_req, reply) => reply.code(200).headers(json).send(LIVE_BODY),
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: READY_PATH,
    handler: async (_req, reply) => {
      const r = readyBody(await readiness(), false);
      return reply.code(r.status).headers(json).send(r.body);
    },
  });
}
