/**
 * A Writable that writes into an open FileHandle at consecutive offsets and NEVER
 * closes it: the handle has exactly one owner, the code that opened it, which closes
 * it exactly once.
 *
 * Why not `fs.createWriteStream('', { fd })`: a stream built on a descriptor number
 * closes that number when it is destroyed, whatever `autoClose` says, and a pipeline
 * destroys it when the client disconnects. The owner then closed the same number a
 * second time; by then the kernel had often handed it to a new client socket, whose
 * descriptor was closed under libuv (abort, exit 134) or failed with EBADF later.
 *
 * A FileHandle also counts its operations in flight: `close()` waits for a write
 * still running when the stream is torn down, so the descriptor is never closed under
 * an I/O thread either.
 */
import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

export function fileSink(fh: FileHandle, start: number, highWaterMark: number): Writable {
  let pos = start;
  const writeAll = async (chunks: Buffer[]): Promise<void> => {
    let total = 0;
    for (const c of chunks) total += c.length;
    let done = (await fh.writev(chunks, pos)).bytesWritten;
    pos += done;
    // Short writes are rare on regular files (a disk filling up): the rest goes on
    // in single writes, the next of which then reports ENOSPC.
    if (done === total) return;
    const all = Buffer.concat(chunks);
    while (done < total) {
      const { bytesWritten } = await fh.write(all, done, total - done, pos);
      if (bytesWritten === 0) throw Object.assign(new Error('no progress writing the file'), { code: 'ENOSPC' });
      done += bytesWritten;
      pos += bytesWritten;
    }
  };
  return new Writable({
    highWaterMark,
    writev(items: { chunk: Buffer }[], cb: (e?: Error | null) => void) {
      writeAll(items.map((i) => i.chunk)).then(() => cb(), cb);
    },
  });
}
