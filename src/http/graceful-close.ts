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
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

export class GracefulClose {
  readonly #unfinished = new Set<Socket>();
  #closing = false;

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

  /** The close begins: cut what waits for an answered body, and each connection once answered. */
  begin(): void {
    this.#closing = true;
    for (const s of this.#unfinished) s.destroy();
    this.#unfinished.clear();
  }
}
