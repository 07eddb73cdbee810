/**
 * Per-identity fairness at the transport: one identity (a user's DN, whatever proxy it
 * presents; a connection without a verified identity counts under its remote address)
 * may hold at most `maxConnections` open connections and `maxRequests` requests in
 * progress, so one busy or broken client cannot take every socket and every handler
 * from the others. Over a cap Ceres answers rather than drops, so the client learns why:
 *   - a connection over the cap is not counted; every request on it is answered 503
 *     (CE_ERR_HTTP_TOO_MANY_CONNECTIONS, `Retry-After`, `Connection: close`) and the
 *     connection is closed after a short grace time even if it sends nothing;
 *   - a request over the cap is answered 429 (CE_ERR_HTTP_TOO_MANY_REQUESTS, `Retry-After`).
 * A request is in progress from its headers until its response is finished or aborted.
 */
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** How long a connection over the cap may stay open to receive its 503. */
export const OVER_LIMIT_GRACE_MS = 5000;

const OVER = Symbol('ceres.overConnectionLimit');
type MarkedSocket = Socket & { [OVER]?: true };

export interface FairnessLog {
  warn(obj: object, msg: string): void;
}

/** Counts of something held per key; a key disappears when its count drops to zero. */
export class PerKeyCounter {
  readonly #n = new Map<string, number>();
  constructor(readonly limit: number) {}
  /** Take one unit for `key` unless it already holds `limit`. */
  tryTake(key: string): boolean {
    const n = this.#n.get(key) ?? 0;
    if (n >= this.limit) return false;
    this.#n.set(key, n + 1);
    return true;
  }
  give(key: string): void {
    const n = (this.#n.get(key) ?? 1) - 1;
    if (n <= 0) this.#n.delete(key);
    else this.#n.set(key, n);
  }
  held(key: string): number {
    return this.#n.get(key) ?? 0;
  }
}

/**
 * Count each connection under its key once its handshake completed. Must be attached
 * after the per-connection identity (tls-options.ts), whose listener runs first.
 */
export function limitConnectionsPerIdentity(
  server: TlsServer,
  maxConnections: number,
  keyOf: (s: TLSSocket) => string,
  log?: FairnessLog,
): void {
  const open = new PerKeyCounter(maxConnections);
  server.on('secureConnection', (socket: TLSSocket) => {
    const key = keyOf(socket);
    if (open.tryTake(key)) {
      socket.once('close', () => open.give(key));
      return;
    }
    (socket as MarkedSocket)[OVER] = true;
    log?.warn(
      { identity: key, remote: socket.remoteAddress, limit: maxConnections },
      'connection over the per-identity limit: its requests get 503 and it is closed',
    );
    const t = setTimeout(() => socket.destroy(), OVER_LIMIT_GRACE_MS);
    t.unref();
    socket.once('close', () => clearTimeout(t));
  });
}

export function overConnectionLimit(socket: Socket): boolean {
  return (socket as MarkedSocket)[OVER] === true;
}

const RELEASE = Symbol('ceres.inFlightRelease');
type HeldRequest = IncomingMessage & { [RELEASE]?: () => void };

/**
 * Marks `req` as holding a unit of its identity's requests in progress; `give` returns it.
 * Returns the release to call when the answer ends (each release gives back once).
 */
export function holdInFlight(req: IncomingMessage, give: () => void): () => void {
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    give();
  };
  (req as HeldRequest)[RELEASE] = release;
  return release;
}

/**
 * The request no longer counts as in progress though its answer goes on: an event
 * stream, open for hours, must not take one of the identity's request slots.
 */
export function leaveInFlight(req: IncomingMessage): void {
  (req as HeldRequest)[RELEASE]?.();
}
