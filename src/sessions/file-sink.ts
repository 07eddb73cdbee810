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
 * Bytes are copied, as they arrive, into the sink's own `chunkBytes` buffers (recycled
 * ones for uploads): the incoming chunks (one per TLS record, at most 16 KiB) are then
 * garbage at once, and every write but the last is a full buffer (upload-gc.ts says why
 * the chunks must die young).
 *
 * Writes do not wait on each other: each batch gets its own range of the file (its offset
 * is fixed when it is issued) and goes to the thread pool at once. An idle writer takes
 * what is there (a slow client's bytes still go out); a further write, up to `maxWrites`
 * in flight, starts only for a full batch. Once they are all busy and a batch is waiting,
 * the stream stops taking data (backpressure), so memory per upload is bounded by about
 * `maxWrites + 1` buffers plus the stream's high-water mark. With a `spare` allowance,
 * up to `spare.maxBatches` more batches may wait, copied, while the allowance lasts: a
 * write slowed down by the kernel then does not leave the incoming chunks waiting in the
 * stream's buffer, where they outlive young-generation collections (upload-gc.ts).
 * Positional writes to disjoint ranges commute, so the file's content does not depend on
 * the order they complete in.
 *
 * Teardown: `_destroy` drops what is not written yet; it and `_final` wait until no
 * write is in flight, so once the stream has closed (and a pipeline over it has settled)
 * nothing touches the handle any more; the owner may close it and remove the file. A FileHandle's `close()` also waits for
 * its operations in flight, so the descriptor is never closed under an I/O thread.
 */
import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

export interface FileSinkOptions {
  /** Offset of the first byte. */
  readonly start: number;
  /** Bytes buffered before a batch is written (the stream's high-water mark). */
  readonly chunkBytes: number;
  /** Most writes in flight at once; more makes the stream buffer, then wait (backpressure). */
  readonly maxWrites: number;
  /**
   * Where the sink's buffers (each `chunkBytes` long) come from and go back to once
   * their write has ended; fresh ones by default.
   */
  readonly buffers?: { readonly take: () => Buffer; readonly give: (b: Buffer) => void };
  /**
   * Called with the running total before each batch is written; a throw refuses the
   * batch (nothing of it is written) and fails the stream with that error.
   */
  readonly accept?: (total: number) => void;
  /** Extra batches that may wait for a write, borrowed from an allowance shared by sinks. */
  readonly spare?: SpareBatches;
}

/**
 * An allowance of batches lent to sinks: `take()` lends one if any is left; `give(n)`
 * takes `n` back. A sink returns what it borrowed as soon as its waiting bytes fit in
 * fewer batches, and all of it when it ends, fails or is destroyed.
 */
export interface SpareBatches {
  /** Most batches one sink may borrow. */
  readonly maxBatches: number;
  take(): boolean;
  give(n: number): void;
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

interface Filled {
  readonly buf: Buffer;
  len: number;
}

export function fileSink(fh: FileHandle, o: FileSinkOptions): Writable {
  let pos = o.start;
  let total = 0;
  let writes = 0;
  let failed: Error | undefined;
  let torn = false;
  const take = o.buffers?.take ?? (() => Buffer.allocUnsafeSlow(o.chunkBytes));
  const give = o.buffers?.give ?? (() => undefined);
  /** Accepted bytes not yet handed to a write: copied into the sink's own buffers. */
  let pending: Filled[] = [];
  let pendingBytes = 0;
  /** The callback of the chunks that wait for room, if any. */
  let waiting: (() => void) | undefined;
  /** Resolvers waiting for the last write to end with nothing pending. */
  let idle: (() => void)[] = [];
  /** Batches borrowed from `o.spare`: each lets one more batch wait, copied. */
  let borrowed = 0;

  const done = (): boolean => writes === 0 && (pendingBytes === 0 || torn || failed !== undefined);
  const issue = (): void => {
    const batch = pending;
    const bytes = pendingBytes;
    pending = [];
    pendingBytes = 0;
    const at = pos;
    pos += bytes;
    writes++;
    // The buffers go back only once the write has ended: nothing reads them any more.
    const back = (): void => {
      for (const f of batch) give(f.buf);
    };
    writeAt(
      fh,
      batch.map((f) => f.buf.subarray(0, f.len)),
      bytes,
      at,
    ).then(
      () => (back(), settled()),
      (e: unknown) => (back(), settled(e)),
    );
  };
  const copyIn = (chunk: Buffer): void => {
    let from = 0;
    while (from < chunk.length) {
      let last = pending[pending.length - 1];
      if (last === undefined || last.len === last.buf.length) {
        last = { buf: take(), len: 0 };
        pending.push(last);
      }
      const n = chunk.copy(last.buf, last.len, from);
      last.len += n;
      from += n;
    }
  };
  /**
   * A write starts when the writer is idle (a slow client's data still goes out at once),
   * or when a full batch is waiting and fewer than `maxWrites` are in flight.
   */
  const pump = (): void => {
    while (
      !torn &&
      failed === undefined &&
      pendingBytes > 0 &&
      (writes === 0 || (pendingBytes >= o.chunkBytes && writes < o.maxWrites))
    ) {
      issue();
    }
    giveBack();
  };
  /** Gives back the borrowed batches the waiting bytes no longer need. */
  const giveBack = (): void => {
    const need = torn || failed !== undefined ? 0 : Math.max(0, Math.ceil(pendingBytes / o.chunkBytes) - 1);
    if (borrowed > need) {
      o.spare?.give(borrowed - need);
      borrowed = need;
    }
  };
  /** Less than a batch waits, or one more borrowed batch makes room. */
  const room = (): boolean => {
    while (pendingBytes >= o.chunkBytes * (1 + borrowed)) {
      if (o.spare === undefined || borrowed >= o.spare.maxBatches || !o.spare.take()) return false;
      borrowed++;
    }
    return true;
  };
  const letGo = (): void => {
    if (waiting === undefined || (failed === undefined && !torn && !room())) return;
    const w = waiting;
    waiting = undefined;
    w();
  };
  const settled = (e?: unknown): void => {
    writes--;
    if (e !== undefined && failed === undefined) {
      failed = e as Error;
      // Failed now, not at the next chunk or at the end (the client may be slow).
      sink.destroy(failed);
    }
    pump();
    letGo();
    if (done()) {
      const all = idle;
      idle = [];
      for (const r of all) r();
    }
  };
  const drained = (): Promise<void> => (done() ? Promise.resolve() : new Promise((resolve) => idle.push(resolve)));

  const sink = new Writable({
    highWaterMark: o.chunkBytes,
    writev(items: { chunk: Buffer }[], cb: (e?: Error | null) => void) {
      if (failed !== undefined) return cb(failed);
      let bytes = 0;
      for (const i of items) bytes += i.chunk.length;
      try {
        o.accept?.(total + bytes);
      } catch (e) {
        return cb(e as Error);
      }
      total += bytes;
      for (const i of items) copyIn(i.chunk);
      pendingBytes += bytes;
      pump();
      // Room for more while less than a batch waits; otherwise wait for a write to end.
      waiting = () => cb(failed);
      letGo();
    },
    final(cb: (e?: Error | null) => void) {
      drained().then(() => cb(failed), cb);
    },
    destroy(err: Error | null, cb: (e?: Error | null) => void) {
      // Chunks not yet written are dropped, and chunks waiting for room let go: the stream
      // is being torn down. Writes already in flight are waited for.
      torn = true;
      for (const f of pending) give(f.buf);
      pending = [];
      pendingBytes = 0;
      giveBack();
      letGo();
      drained().then(() => cb(err ?? failed), cb);
    },
  });
  return sink;
}
