/**
 * The loopback listener (config `metrics.listen`): plain HTTP, no authentication, so it
 * listens on loopback addresses only (the configuration refuses others). Serves
 *   GET /metrics        the Prometheus text format
 *   GET /health/live, /health/ready   with each check's reason
 * Prometheus on another host scrapes it through the site's own means (an SSH tunnel,
 * a reverse proxy with its own authentication, a node-local agent).
 */
import { createServer, type Server } from 'node:http';
import type { CeresMetrics } from '../metrics/registry.js';
import type { Readiness } from '../health/readiness.js';
import { LIVE_BODY, LIVE_PATH, READY_PATH, readyBody } from '../health/answers.js';

export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsListener(o: {
  host: string;
  port: number;
  metrics: CeresMetrics;
  readiness: () => Promise<Readiness>;
  onError: (e: unknown) => void;
}): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('Method Not Allowed\n');
      return;
    }
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const answer = async (): Promise<void> => {
      if (path === '/metrics') return send(200, o.metrics.contentType, await o.metrics.text());
      if (path === LIVE_PATH) return send(200, 'application/json', LIVE_BODY);
      if (path === READY_PATH) {
        const r = readyBody(await o.readiness(), true);
        return send(r.status, 'application/json', r.body);
      }
      send(404, 'text/plain', 'Not Found\n');
    };
    answer().catch((e: unknown) => {
      o.onError(e);
      if (!res.headersSent) send(500, 'text/plain', 'Internal Server Error\n');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: o.host, port: o.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  return {
    port: addr !== null && typeof addr === 'object' ? addr.port : o.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
