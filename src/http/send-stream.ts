/**
 * Answers that may be too large to build in memory (session listings, PROPFIND,
 * action=info): the body is a stream of text pieces (src/doc/text-stream.ts), sent
 * chunked. Fastify pipes it with backpressure and destroys it when the client
 * disconnects, which stops the rendering.
 *
 * An answer that turns out to fit in one chunk is sent whole, with Content-Length,
 * as every answer was before streaming: small answers (nearly all) do not change.
 * A HEAD answer gets the same status and headers and renders nothing more.
 */
import type { FastifyReply } from 'fastify';
import { TEXT_CHUNK_BYTES, textStream } from '../doc/text-stream.js';

export function sendStream(
  reply: FastifyReply,
  status: number,
  contentType: string,
  pieces: Iterable<string>,
): FastifyReply {
  reply.code(status).header('content-type', contentType);
  const it = pieces[Symbol.iterator]();
  let first = '';
  let r = it.next();
  for (; !r.done; r = it.next()) {
    first += r.value;
    if (first.length >= TEXT_CHUNK_BYTES) break;
  }
  if (r.done) return reply.send(Buffer.from(first, 'utf8'));
  if (reply.request.raw.method === 'HEAD') {
    it.return?.();
    return reply.send(textStream([]));
  }
  return reply.send(textStream(rest(first, it)));
}

function* rest(first: string, it: Iterator<string>): Generator<string> {
  try {
    yield first;
    for (let r = it.next(); !r.done; r = it.next()) yield r.value;
  } finally {
    it.return?.();
  }
}
