/**
 * Stream buffer sizes for the whole process (sockets, HTTP messages, file streams).
 *
 * Why 4 MiB instead of Node's 16 KiB:
 *  - throughput: TLS and file copies move data in large pieces (machine limits: 64 KiB
 *    buffers halve a transfer's speed compared with 1 MiB ones);
 *  - correctness on keep-alive connections. When a client sends its next request while
 *    the previous answer is still draining from the socket (write returned false), Node's
 *    HTTP server pauses the connection's parser; on a TLS connection whose next request
 *    spans several TLS records (a 1,000-id list, a bulk submission), the records already
 *    decrypted still reach the paused parser, which fails with HPE_PAUSED, and the server
 *    drops the connection without an answer. It happens when the event loop is busy (the
 *    engine starting 1,000 jobs just accepted) and was seen as "other side closed" by a
 *    client filling a store with bulk submissions. An answer shorter than the socket's
 *    high-water mark never makes the write return false, so that path is not taken for
 *    any answer below 4 MiB (a status or kill answer for 1,000 ids is ~85 KiB, an info
 *    answer ~1 MiB).
 * Memory: the buffers fill only with data being sent or received; answers are rendered
 * whole in memory anyway, and file transfers still wait for drain.
 */
import { getDefaultHighWaterMark, setDefaultHighWaterMark } from 'node:stream';

export const STREAM_BUFFER_BYTES = 4 * 1024 * 1024;

/** Idempotent; call before the listener is created (sockets take the default when made). */
export function useLargeStreamBuffers(): void {
  if (getDefaultHighWaterMark(false) < STREAM_BUFFER_BYTES) setDefaultHighWaterMark(false, STREAM_BUFFER_BYTES);
}
