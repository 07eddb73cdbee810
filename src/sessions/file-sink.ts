/**
 * A Writable that writes into an open FileHandle at consecutive offsets, with several
 * writes in flight, and NEVER closes the handle: the handle has exactly one owner, the
 * code that opened it, which closes it exactly once.
 *
 * Why not `fs.createWriteStream('', { fd })`: a stream built on a descriptor number
 * closes that number when it is destroyed, whatever `autoClose` says, and a pipeline
 * destroys it when the client disconnects. The owner then closed the same number a
 * second time; by then the kernel had often handed it to a new client socket, whose
 * descriptor was closed under libuv (abort, exit 134) or failed with EBADF later.
 *
 * Writes do not wait on each other: each batch of buffered chunks gets its own range of
 * the file (its offset is fixed when it is issued) and goes to the thread pool at once,
 * so the socket keeps being read while earlier batches are still being copied into the
 * page cache. Backpressure stays: the stream accepts more only while fewer than
 * `inFlightBytes` are being written, so memory per upload stays bounded by that plus the
 * stream's high-water mark. Positional writes to disjoint ranges commute, so the file's
 * content does not depend on the order in which they complete.
 *
 * Teardown: `_destroy` and `_final` wait until no write is in flight, so once the stream
 * has closed (and a pipeline over it has settled) nothing touches the handle any more;
 * the owner may close it and remove the file. A FileHandle's `close()` also waits for
 * its operations in flight, so the descriptor is never closed under an I/O thread.
 */
import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

export interface FileSinkOptions {
  /** Offset of the first byte. */
  readonly start: number;
  /** Bytes buffered before a batch is written (the stream's high-water mark). */
  readonly chunkBytes: number;
  /** Most bytes being written at once; more makes the stream wait (backpressure). */
  readonly inFlightBytes: number;
  /**
   * Called with the running total before each batch is written; a throw refuses the
   * batch (nothing of it is written) and fails the stream with that error.
   */
  readonly accept?: (total: number) => void;
}

/** Writes `chunks` (`total` bytes) at `pos` in full; a short write goes on from where it stopped. */
async function writeAt(fh: FileHandle, chunks: Buffer[], total: number, pos: number): Promise<void> {
  let done = (await fh.writev(chunks, pos)).bytesWritten;
  // Short writes are rare on regular files (a disk filling up): the rest goes on in
  // single writes, the next of which then reports ENOSPC.
  if (done === total) return;
  const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
  while (done < total) {
    const { bytesWritten } = await fh.write(all, done, total - done, pos + done);
    if (bytesWritten === 0) throw Object.assign(new Error('no progress writing the file'), { code: 'ENOSPC' });
    done += bytesWritten;
  }
}

export function fileSink(fh: FileHandle, o: FileSinkOptions): Writable {
  let pos = o.start;
  let total = 0;
  let inFlight = 0;
  let failed: Error | undefined;
  /** The callback of the batch that waits for room, if any. */
  let waiting: (() => void) | undefined;
  /** Resolvers waiting for the last write in flight to end. */
  let idle: (() => void)[] = [];

  const settled = (bytes: number, e?: unknown): void => {
    inFlight -= bytes;
    if (e !== undefined && failed === undefined) {
      failed = e as Error;
      // Failed now, not at the next chunk or at the end (the client may be slow).
      sink.destroy(failed);
    }
    if (waiting !== undefined && (failed !== undefined || inFlight < o.inFlightBytes)) {
      const w = waiting;
      waiting = undefined;
      w();
    }
    if (inFlight === 0) {
      const all = idle;
      idle = [];
      for (const r of all) r();
    }
  };
  const drained = (): Promise<void> =>
    inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve));

  const sink = new Writable({
    highWaterMark: o.chunkBytes,
    writev(items: { chunk: Buffer }[], cb: (e?: Error | null) => void) {
      if (failed !== undefined) return cb(failed);
      const chunks = items.map((i) => i.chunk);
      let bytes = 0;
      for (const c of chunks) bytes += c.length;
      try {
        o.accept?.(total + bytes);
      } catch (e) {
        return cb(e as Error);
      }
      total += bytes;
      const at = pos;
      pos += bytes;
      inFlight += bytes;
      writeAt(fh, chunks, bytes, at).then(
        () => settled(bytes),
        (e: unknown) => settled(bytes, e),
      );
      if (inFlight < o.inFlightBytes) return cb();
      waiting = () => cb(failed);
    },
    final(cb: (e?: Error | null) => void) {
      drained().then(() => cb(failed), cb);
    },
    destroy(err: Error | null, cb: (e?: Error | null) => void) {
      // A batch still waiting for room is let go (its stream is being torn down).
      const w = waiting;
      waiting = undefined;
      w?.();
      drained().then(() => cb(err ?? failed), cb);
    },
  });
  return sink;
}
