/**
 * Large answers (a listing of 200,000 entries is tens of MB) are written as a stream of
 * text pieces instead of one string: the pieces are joined into chunks of about 64 KiB,
 * and between chunks the event loop runs, so other requests are served meanwhile.
 *
 * The stream is pulled: a piece is rendered only when the chunk before it was taken
 * (Readable.from stops asking while the consumer's buffer is full), so a slow client
 * holds at most a few buffers, not the whole answer. When the consumer destroys the
 * stream (Fastify does when the client disconnects), the generator is closed and no
 * further piece is rendered.
 */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

export const TEXT_CHUNK_BYTES = 64 * 1024;

async function* chunked(pieces: Iterable<string>, chunkBytes: number): AsyncGenerator<string> {
  let buf = '';
  for (const p of pieces) {
    buf += p;
    if (buf.length >= chunkBytes) {
      yield buf;
      buf = '';
      await nextTurn();
    }
  }
  if (buf !== '') yield buf;
}

/** A byte stream (UTF-8) of the concatenated `pieces`. */
export function textStream(pieces: Iterable<string>, chunkBytes = TEXT_CHUNK_BYTES): Readable {
  return Readable.from(chunked(pieces, chunkBytes), { objectMode: false });
}
