/**
 * Writing an uploaded file into a session directory, streamed (never buffered whole).
 *
 *  - Plain PUT (no Content-Range): the body goes to a hidden temporary file next to
 *    the target, which is renamed over the target when the body is complete. The
 *    file is thus replaced as a whole (A-REX writes in place without truncating and
 *    leaves the old tail of a longer file); readers and the job never see a half
 *    upload, and an aborted upload leaves the old file (or nothing) behind.
 *    `If-None-Match: *` makes it fail with 412 when the file exists, checked before
 *    the body is read and again atomically at the end (link(2) refuses to replace).
 *  - Ranged PUT (`Content-Range: bytes a-b/total`): the body is written in place at
 *    offset a; the file is created when missing and never truncated, except to
 *    `total` when the last missing range arrives (so a stale longer file does not
 *    keep its old tail). The body must be exactly b-a+1 bytes.
 *
 * Parents are created (0700) and nothing is ever written through a symlink (see
 * src/fs/safe-fs.ts). Files are created 0600. Every write counts against the job's upload
 * quota (upload-quota.ts); a full disk or file system quota is a 507.
 */
import { randomBytes } from 'node:crypto';
import { constants as C } from 'node:fs';
import { link, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { finished as finishedCb, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ceError, isCeError } from '../errors/ce-error.js';
import type { ContentRange } from './byte-range.js';
import { inDir, kindOf, lstatIn, mapFsError, openDirChain, removedDir } from '../fs/safe-fs.js';
import { giveHandle, ownerToGive } from '../fs/session-owner.js';
import { UPLOAD_TEMP_PREFIX, type SessionPath } from './session-path.js';
import type { UploadTracker } from './upload-tracker.js';
import type { QuotaReservation, UploadQuota } from './upload-quota.js';
import { CHUNK_BYTES, giveChunk, takeChunk } from './chunk-pool.js';
import { fileSink } from './file-sink.js';
import { bodyBytesReceived } from './upload-gc.js';
import { uploadSpare } from './spare-batches.js';

/** Chunk size of file streams: 1 MiB doubles throughput over the 64 KiB default. */
export const FILE_STREAM_CHUNK = CHUNK_BYTES;

/**
 * Writes of one upload in flight at once (file-sink.ts): two, so reading the socket does
 * not wait for the page cache. Not more: concurrent writes into one file queue on its
 * inode lock in the kernel, and with 4 MiB in flight the thread pool spent more system
 * time for the same upload (docs/performance.md, "Uploads").
 */
export const UPLOAD_WRITES_IN_FLIGHT = 2;

export interface UploadRequest {
  readonly jobId: string;
  readonly sessionDir: string;
  readonly path: SessionPath;
  readonly body: Readable;
  /** Aborted (with the error to answer) when the body must no longer be waited for. */
  readonly signal?: AbortSignal;
  /** Declared Content-Length, if any. */
  readonly contentLength: number | undefined;
  readonly range: ContentRange | undefined;
  readonly ifNoneMatchAny: boolean;
  readonly maxFileBytes: number;
}

export interface UploadResult {
  /** All bytes of the file have now arrived (report it to the job as uploaded). */
  readonly complete: boolean;
  readonly bytes: number;
}

/** The in-memory books an upload updates. */
export interface UploadLedgers {
  readonly tracker: UploadTracker;
  readonly quota: UploadQuota;
}

export async function writeUpload(u: UploadRequest, books: UploadLedgers): Promise<UploadResult> {
  const { tracker } = books;
  const segs = u.path.segments;
  const name = segs[segs.length - 1];
  if (name === undefined || u.path.trailingSlash) throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
  const r = u.range;
  if (r) {
    if (r.end + 1 > u.maxFileBytes || (r.total ?? 0) > u.maxFileBytes) throw tooLarge(u.maxFileBytes);
    if (u.contentLength !== undefined && u.contentLength !== r.end - r.start + 1) {
      throw ceError(
        'CE_ERR_SESSION_BODY_LENGTH',
        `Body length ${u.contentLength} does not match Content-Range (${r.end - r.start + 1} bytes)`,
      );
    }
    if (!tracker.canAccept(u.jobId, u.path.rel, r.start, r.end + 1)) throw ceError('CE_ERR_SESSION_UPLOAD_FRAGMENTED');
  } else if (u.contentLength !== undefined && u.contentLength > u.maxFileBytes) {
    throw tooLarge(u.maxFileBytes);
  }

  // Refused here, before the body is read, when the length is known.
  const q = books.quota.begin(u.jobId, u.path.rel, r ? r.end + 1 : (u.contentLength ?? 0));
  let parent: FileHandle | undefined;
  try {
    parent = await openDirChain(u.sessionDir, segs.slice(0, -1), true);
    const existing = await lstatIn(parent, name);
    if (existing) {
      const k = kindOf(existing);
      if (k === 'symlink') throw ceError('CE_ERR_SESSION_SYMLINK');
      if (k === 'dir') throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
      if (k === 'other') throw ceError('CE_ERR_SESSION_NOT_REGULAR_FILE');
      if (!r && u.ifNoneMatchAny) throw ceError('CE_ERR_SESSION_FILE_EXISTS');
    }
    if (r) return await writeRange(u, r, parent, name, tracker, q);
    const bytes = await writeWhole(u, parent, name, q);
    tracker.forget(u.jobId, u.path.rel);
    return { complete: true, bytes };
  } finally {
    q.release();
    await parent?.close();
  }
}

async function writeRange(
  u: UploadRequest,
  r: ContentRange,
  parent: FileHandle,
  name: string,
  tracker: UploadTracker,
  q: QuotaReservation,
): Promise<UploadResult> {
  let fh: FileHandle;
  /** The furthest byte this request handed to the file, whatever its name holds later. */
  let reached = 0;
  try {
    fh = await open(inDir(parent, name), C.O_WRONLY | C.O_CREAT | C.O_NOFOLLOW | C.O_NONBLOCK, 0o600);
  } catch (e) {
    return openFailed(e);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw ceError('CE_ERR_SESSION_NOT_REGULAR_FILE');
    // Under a local account: never write into a file the account could not write itself
    // (a hard link the job made to a file it does not own); a new file becomes the account's.
    const owner = ownerToGive(await parent.stat());
    if (
      owner !== undefined &&
      (st.nlink > 1 || (st.uid !== owner.uid && st.uid !== 0) || (st.uid === 0 && st.size > 0))
    ) {
      throw ceError('CE_ERR_SESSION_PERMISSION_DENIED', "The file is not the job owner's own");
    }
    await giveHandle(fh, owner);
    const want = r.end - r.start + 1;
    const got = await streamInto(
      u,
      fh,
      r.start,
      want,
      () => ceError('CE_ERR_SESSION_BODY_LENGTH', `Body longer than Content-Range (${want} bytes)`),
      (n) => (reached = r.start + n),
    );
    if (got !== want)
      throw ceError('CE_ERR_SESSION_BODY_LENGTH', `Body of ${got} bytes does not match Content-Range (${want} bytes)`);
    // Written in place, so into a file that its folder's removal (the job cleaned while the
    // body arrived) has taken away: not reported as received, the folder is "not found".
    // (A whole upload learns it from its rename.)
    if (removedDir(await parent.stat())) throw ceError('CE_ERR_SESSION_NOT_FOUND');
    const complete = tracker.received(u.jobId, u.path.rel, r.start, r.end + 1, r.total);
    if (complete && r.total !== undefined && (await fh.stat()).size > r.total) await fh.truncate(r.total);
    return { complete, bytes: got };
  } finally {
    await fh.close();
    // Whatever happened, the file is now as long as it is (an aborted range may have
    // extended it): that is what counts against the quota. Read after close(), which
    // waits for a write still in flight. At least as far as this write reached, though:
    // the job may have renamed the file away meanwhile (the bytes are in it all the
    // same), and a count by the name alone made every write so raced free.
    const st = await lstatIn(parent, name).catch(() => undefined);
    if (st?.isFile() || reached > 0) q.commit(Math.max(st?.isFile() ? st.size : 0, reached));
  }
}

async function writeWhole(u: UploadRequest, parent: FileHandle, name: string, q: QuotaReservation): Promise<number> {
  const tmp = `${UPLOAD_TEMP_PREFIX}${randomBytes(8).toString('hex')}`;
  let fh: FileHandle;
  try {
    fh = await open(inDir(parent, tmp), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  } catch (e) {
    return openFailed(e);
  }
  let placed = false;
  try {
    let got: number;
    try {
      await giveHandle(fh, ownerToGive(await parent.stat()));
      got = await streamInto(
        u,
        fh,
        0,
        u.maxFileBytes,
        () => tooLarge(u.maxFileBytes),
        (n) => q.grow(n),
      );
    } finally {
      await fh.close();
    }
    if (u.ifNoneMatchAny) {
      try {
        await link(inDir(parent, tmp), inDir(parent, name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw ceError('CE_ERR_SESSION_FILE_EXISTS');
        mapFsError(e);
      }
      placed = true;
      await unlink(inDir(parent, tmp)).catch(() => undefined);
    } else {
      try {
        await rename(inDir(parent, tmp), inDir(parent, name));
      } catch (e) {
        const c = (e as NodeJS.ErrnoException).code;
        if (c === 'EISDIR' || c === 'ENOTEMPTY' || c === 'EEXIST') throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
        mapFsError(e);
      }
      placed = true;
    }
    q.commit(got);
    return got;
  } finally {
    if (!placed) await unlink(inDir(parent, tmp)).catch(() => undefined);
  }
}

function openFailed(e: unknown): never {
  const c = (e as NodeJS.ErrnoException).code;
  if (c === 'ELOOP') throw ceError('CE_ERR_SESSION_SYMLINK');
  if (c === 'EISDIR') throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
  if (c === 'ENXIO' || c === 'ETXTBSY') throw ceError('CE_ERR_SESSION_NOT_REGULAR_FILE');
  return mapFsError(e);
}

/**
 * Pipes `body` into `fh` from `offset`, refusing (with `overflow()`) more than `limit`
 * bytes. Returns the number of bytes written. A client that disconnects, or an abort
 * of `u.signal`, makes this reject (nothing is reported as received). When it settles,
 * no write into `fh` is in flight any more (file-sink.ts), whatever happened.
 *
 * The request is piped by hand rather than put into `pipeline`: a pipeline would
 * destroy the request, and with it the connection, on a refusal, so the client would
 * never see the 4xx. Unpiped, the unread rest is read and dropped.
 */
async function streamInto(
  u: UploadRequest,
  fh: FileHandle,
  offset: number,
  limit: number,
  overflow: () => Error,
  onBytes?: (n: number) => void,
): Promise<number> {
  const { body, signal } = u;
  let n = 0;
  // The caller owns `fh` and closes it once; the sink never does (file-sink.ts).
  const out = fileSink(fh, {
    start: offset,
    chunkBytes: FILE_STREAM_CHUNK,
    maxWrites: UPLOAD_WRITES_IN_FLIGHT,
    buffers: { take: takeChunk, give: giveChunk },
    spare: uploadSpare,
    accept: (total) => {
      bodyBytesReceived(total - n);
      n = total;
      if (n > limit) throw overflow();
      onBytes?.(n);
    },
  });
  const written = finished(out);
  const cleanup = finishedCb(body, (err) => {
    if (err) out.destroy(err);
  });
  const stop = (): void => void out.destroy(signal?.reason as Error);
  signal?.addEventListener('abort', stop);
  body.pipe(out);
  try {
    await written;
  } catch (e) {
    body.unpipe(out);
    // Read and drop the rest, so the answer reaches the client and the connection
    // stays usable: the HTTP server drains only bodies nobody has started reading.
    // An aborted body is not waited for (its connection closes after the answer).
    if (signal?.aborted !== true) body.resume();
    if (isCeError(e)) throw e;
    const c = (e as NodeJS.ErrnoException).code;
    if (c === 'ENOSPC' || c === 'EDQUOT' || c === 'EFBIG') throw ceError('CE_ERR_SESSION_NO_SPACE');
    throw e;
  } finally {
    cleanup();
    signal?.removeEventListener('abort', stop);
  }
  return n;
}

function tooLarge(max: number) {
  return ceError('CE_ERR_SESSION_FILE_TOO_LARGE', `File too large (at most ${max} bytes)`);
}
