/**
 * Sending file content (session files, diagnose files) with single byte ranges.
 * Files are streamed from an already open descriptor in recycled 1 MiB chunks
 * (chunk-pool.ts), so memory stays bounded whatever the size, a download allocates
 * nothing per chunk, and the bytes sent are those of the file that was opened (and
 * checked) by the caller, never of a path resolved again.
 *
 * GET: 200 with the whole content, or 206 + Content-Range for a satisfiable single
 * range, 416 + `Content-Range: bytes *\/size` for an unsatisfiable one (byte-range.ts).
 * HEAD: the headers of a full GET (RFC 9110 defines Range for GET only).
 * Always `Accept-Ranges: bytes` and an exact Content-Length.
 */
import type { FileHandle } from 'node:fs/promises';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ceError } from '../../errors/ce-error.js';
import { parseRange } from '../../sessions/byte-range.js';
import { giveChunk, takeChunk } from '../../sessions/chunk-pool.js';

export interface ContentInfo {
  readonly contentType: string;
  readonly lastModified?: Date | undefined;
}

interface Plan {
  readonly status: 200 | 206;
  readonly start: number;
  readonly length: number;
}

function plan(req: IncomingMessage, size: number): Plan {
  if (req.method !== 'GET') return { status: 200, start: 0, length: size };
  const r = parseRange(req.headers.range, size);
  if (r.kind === 'unsatisfiable')
    throw ceError('CE_ERR_SESSION_RANGE_NOT_SATISFIABLE', undefined, {
      headers: { 'content-range': `bytes */${size}`, 'accept-ranges': 'bytes' },
    });
  if (r.kind === 'full') return { status: 200, start: 0, length: size };
  return { status: 206, start: r.start, length: r.end - r.start + 1 };
}

function headers(reply: FastifyReply, p: Plan, size: number, info: ContentInfo): void {
  reply.code(p.status);
  void reply.header('content-type', info.contentType);
  void reply.header('accept-ranges', 'bytes');
  void reply.header('content-length', String(p.length));
  if (info.lastModified) void reply.header('last-modified', info.lastModified.toUTCString());
  if (p.status === 206) void reply.header('content-range', `bytes ${p.start}-${p.start + p.length - 1}/${size}`);
}

/** Sends `size` bytes of the open file `fh`; takes ownership of `fh` (always closed). */
export async function sendFileHandle(
  req: IncomingMessage,
  reply: FastifyReply,
  fh: FileHandle,
  size: number,
  info: ContentInfo,
): Promise<FastifyReply> {
  let p: Plan;
  try {
    p = plan(req, size);
  } catch (e) {
    await fh.close();
    throw e;
  }
  headers(reply, p, size, info);
  if (req.method === 'HEAD' || p.length === 0) {
    await fh.close();
    return reply.send();
  }
  // The body is written straight to the response (Fastify's hooks for the end of the
  // response still run): only then is it known when a chunk buffer is free again.
  reply.hijack();
  const res = reply.raw;
  try {
    res.writeHead(reply.statusCode, reply.getHeaders() as OutgoingHttpHeaders);
    await pump(fh, res, p.start, p.length);
  } finally {
    await fh.close();
  }
  return reply;
}

/**
 * Copies `length` bytes from `start` of `fh` to `res` through recycled buffers
 * (chunk-pool.ts), reading the next chunk while the previous one is on the wire.
 * Never rejects: once the status line is out, a failure can only cut the connection.
 */
async function pump(fh: FileHandle, res: ServerResponse, start: number, length: number): Promise<void> {
  let pos = start;
  let left = length;
  let drained: Promise<void> | undefined;
  while (left > 0) {
    const buf = takeChunk();
    let n: number;
    try {
      n = (await fh.read(buf, 0, Math.min(buf.length, left), pos)).bytesRead;
    } catch {
      n = -1;
    }
    if (drained) await drained;
    // A file the job truncates while we send it ends early (n === 0): the promised
    // Content-Length can no longer be met, so the connection is cut rather than left
    // waiting for bytes that never come. A read error is cut the same way.
    if (n <= 0 || res.destroyed) {
      giveChunk(buf);
      if (!res.destroyed) res.destroy();
      return;
    }
    pos += n;
    left -= n;
    const ok = res.write(n === buf.length ? buf : buf.subarray(0, n), () => giveChunk(buf));
    drained = ok ? undefined : drainOrClose(res);
  }
  if (drained) await drained;
  if (!res.destroyed) res.end();
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || !res.writableNeedDrain) return resolve();
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function sendBuffer(req: IncomingMessage, reply: FastifyReply, data: Buffer, info: ContentInfo): FastifyReply {
  const p = plan(req, data.length);
  headers(reply, p, data.length, info);
  if (req.method === 'HEAD') return reply.send();
  return reply.send(data.subarray(p.start, p.start + p.length));
}
