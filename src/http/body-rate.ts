/**
 * The body-rate floor: a request body must arrive at `minBytesPerSecond` on average
 * over any `windowSeconds`, or the request is answered 408 and its connection
 * closed. Without it a client trickling a body (a byte every few seconds) holds a
 * connection, a handler and, for uploads, an open file until the request timeout
 * (an hour by default).
 *
 *  - Measured on the connection (`socket.bytesRead`: decrypted bytes under TLS), from
 *    the end of the request head until the body has arrived; so it also covers the
 *    rest of a body that is drained after an early answer.
 *  - Never the client's fault: while the server itself is behind (data waits unread in
 *    the request's buffer: a slow disk, a busy handler), the window starts over.
 *  - Checked every quarter window, so a trickler is cut between one and 1.25 windows.
 *  - The reader of the body (readBody, the upload stream) registers how to stop with
 *    an error (onBodyTooSlow); the error carries `Connection: close`, so the 408 goes
 *    out and the connection is closed after it. With no reader, or once an answer
 *    has been sent, the connection is simply closed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ceError } from '../errors/ce-error.js';
import { bodyReader, hasBody } from './body.js';

export interface BodyRateOptions {
  /** 0 turns the floor off. */
  readonly minBytesPerSecond: number;
  readonly windowSeconds: number;
}

/** After a 408, how long the answer may take to leave before the connection is cut anyway. */
const ANSWER_GRACE_MS = 5000;
const TICKS_PER_WINDOW = 4;

/** Watches the body of one request (no-op without a body or with the floor off). */
export function guardBodyRate(
  req: IncomingMessage,
  res: ServerResponse,
  o: BodyRateOptions,
  log?: (msg: string, detail: object) => void,
): void {
  if (o.minBytesPerSecond <= 0 || !hasBody(req)) return;
  const sock = req.socket;
  const need = o.minBytesPerSecond * o.windowSeconds;
  // bytesRead at each of the last TICKS_PER_WINDOW + 1 ticks: first and last span a window.
  let samples = [sock.bytesRead];
  const timer = setInterval(
    () => {
      const now = sock.bytesRead;
      if (req.readableLength > 0) {
        samples = [now];
        return;
      }
      samples.push(now);
      if (samples.length <= TICKS_PER_WINDOW) return;
      samples.shift();
      const got = now - (samples[0] as number);
      if (got >= need) return;
      stop();
      const reason = `Request body arriving too slowly: ${got} bytes in the last ${o.windowSeconds} s, at least ${need} required`;
      const reader = bodyReader(req);
      log?.('request body too slow', {
        received: got,
        required: need,
        windowSeconds: o.windowSeconds,
        answered: reader !== undefined && !res.headersSent,
      });
      if (reader && !res.headersSent) {
        reader(ceError('CE_ERR_HTTP_BODY_TOO_SLOW', reason, { headers: { connection: 'close' } }));
        setTimeout(() => sock.destroy(), ANSWER_GRACE_MS).unref();
      } else {
        sock.destroy();
      }
    },
    (o.windowSeconds * 1000) / TICKS_PER_WINDOW,
  );
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    req.off('end', stop);
    sock.off('close', stop);
  };
  req.once('end', stop);
  sock.once('close', stop);
}

/** The onRequest hook that puts every request body under the floor. */
export function bodyRateHook(o: BodyRateOptions) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    guardBodyRate(request.raw, reply.raw, o, (msg, detail) => request.log.info(detail, msg));
  };
}
