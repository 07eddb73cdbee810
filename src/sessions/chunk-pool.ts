/**
 * Reusable 1 MiB buffers for sending file content (src/api/rest/send-file.ts).
 *
 * Why not a fresh Buffer per chunk (what fs read streams do): each 1 MiB is memory
 * outside the JS heap, and V8 answers every 64 MiB of it with a collection. Once the
 * heap has been shrunk (V8's memory reducer does so whenever the service is idle for
 * a few seconds) those are full mark-compacts of the whole service heap, several per
 * second during a download, which measured at half the speed of a bare HTTPS server.
 * Recycled buffers allocate nothing per chunk, so a download costs the same whatever
 * state the collector is in.
 *
 * Invariant: a buffer is given back only when nothing reads or writes it any more
 * (after the socket write's callback, or when the file read into it failed).
 * Only bytes freshly read into a buffer are ever sent from it.
 */
export const CHUNK_BYTES = 1024 * 1024;

/** Idle buffers kept for the next transfer; more in flight are simply dropped when done. */
const MAX_IDLE = 8;
const idle: Buffer[] = [];

export function takeChunk(): Buffer {
  return idle.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
}

export function giveChunk(b: Buffer): void {
  if (b.length === CHUNK_BYTES && idle.length < MAX_IDLE && !idle.includes(b)) idle.push(b);
}
