/**
 * What a graceful close of the server waits for: requests in progress, and nothing else.
 *
 * Node's `server.close()` cuts the connections idle at that moment and then waits for
 * every other one to close by itself. Two kinds would hold it until the keep-alive
 * timeout (minutes) though they owe the service nothing:
 *  - a connection whose request was answered before its body had all arrived (a refused
 *    upload: 413 past the quota, 4xx before the body was read). The server reads and
 *    drops the rest so the client sees the answer and may keep the connection, and Node
 *    counts it busy until the last byte; a client may stop sending after its answer
 *    (Node's own HTTP client does, when the answer comes first);
 *  - a connection whose request was in progress when the close began: answered, it is
 *    idle, but the one sweep of idle connections is over.
 * Both are cut: the first when the close begins, the second once answered.
 * A third kind has not begun a request at all: a connection still in its TLS handshake
 * (a client that connected and never said hello, or is slow to), or past it with no request
 * yet (an HTTP client that connects ahead, as undici does after an aborted request). Node's
 * sweep of idle connections does not see either, and the close would wait for the handshake
 * or keep-alive timeout (30 s or more, past which a stop ends forced); it owes nothing and
 * is cut when the close begins.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';

/** One live connection's key: its peer's address and port (the raw socket and the TLS socket over it share them). */
const peerOf = (s: Socket): string | undefined =>
  s.remotePort === undefined ? undefined : `${s.remoteAddress ?? ''}|${s.remotePort}`;

export class GracefulClose {
  readonly #unfinished = new Set<Socket>();
  readonly #unused = new Map<string, Socket>();
  #closing = false;

  /** Follows `server`'s connections until their first request (see above). */
  watchHandshakes(server: TlsServer): void {
    server.on('connection', (raw: Socket) => {
      const peer = peerOf(raw);
      if (peer === undefined) return; // already gone
      if (this.#closing) return void raw.destroy();
      this.#unused.set(peer, raw);
      raw.once('close', () => {
        if (this.#unused.get(peer) === raw) this.#unused.delete(peer);
      });
    });
    // The HTTPS server's: the request's socket is the TLS socket over the raw one.
    server.on('request', (req: IncomingMessage) => {
      const peer = peerOf(req.socket);
      if (peer !== undefined) this.#unused.delete(peer);
    });
  }

  /** Called once `req` has been answered (its response finished or was cut). */
  answered(req: IncomingMessage): void {
    const socket = req.socket;
    // Requests injected without a connection (tests, light-my-request) have none to cut.
    if (!(socket instanceof Socket)) return;
    if (this.#closing) return void socket.destroy();
    if (req.complete || req.destroyed || this.#unfinished.has(socket)) return;
    this.#unfinished.add(socket);
    const forget = (): void => {
      this.#unfinished.delete(socket);
      req.off('end', forget);
      socket.off('close', forget);
    };
    req.once('end', forget);
    socket.once('close', forget);
  }

  /** The close begins: cut what waits for an answered body or has no request yet, and each connection once answered. */
  begin(): void {
    this.#closing = true;
    for (const s of this.#unfinished) s.destroy();
    this.#unfinished.clear();
    for (const s of this.#unused.values()) s.destroy();
    this.#unused.clear();
  }
}
