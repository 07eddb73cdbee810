/**
 * Reading small request bodies (job id lists, job descriptions, delegation PEMs) with
 * a hard cap. A declared Content-Length over the cap is refused before reading; a
 * chunked body is cut off as soon as it passes the cap. File uploads never come here:
 * they are streamed to disk by the session handler. Both kinds of reader stop with
 * 408 when the body-rate floor (body-rate.ts) says the body is too slow.
 */
import type { IncomingMessage } from 'node:http';
import { ceError, isCeError, type CeError } from '../errors/ce-error.js';

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(maxBytes));
  }
  // Events, not `for await`: the body-rate floor must be able to stop this read without
  // destroying the request (which would take the socket, and the 408, with it).
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (req.destroyed) return Promise.reject(clientAborted(undefined));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = (e: unknown, body?: Buffer): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      unwatch();
      if (body !== undefined) return resolve(body);
      // Drop the rest so the answer can be read and the connection reused, except
      // when the body is too slow: that connection is closed after the answer.
      if (!isTooSlow(e)) req.resume();
      reject(e);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > maxBytes) finish(tooLarge(maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
    const onError = (e: unknown): void => finish(bodyError(req, e));
    const onClose = (): void => {
      if (!req.complete) finish(clientAborted(undefined));
    };
    const unwatch = onBodyTooSlow(req, finish);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const readers = new WeakMap<IncomingMessage, (e: CeError) => void>();

/**
 * Called by a body reader (readBody, the upload stream): `stop` ends its read with an
 * error, used by the body-rate floor (body-rate.ts). Returns the unregistration.
 */
export function onBodyTooSlow(req: IncomingMessage, stop: (e: CeError) => void): () => void {
  readers.set(req, stop);
  return () => {
    if (readers.get(req) === stop) readers.delete(req);
  };
}

/** How to stop the current reader of the request's body, if one is reading. */
export function bodyReader(req: IncomingMessage): ((e: CeError) => void) | undefined {
  return readers.get(req);
}

/** True for the error that cuts a slow body (its reader must not drain the rest). */
export function isTooSlow(e: unknown): boolean {
  return (e as CeError | null)?.code === 'CE_ERR_HTTP_BODY_TOO_SLOW';
}

function tooLarge(maxBytes: number): CeError {
  return ceError('CE_ERR_HTTP_BODY_TOO_LARGE', `request body larger than ${maxBytes} bytes`);
}

/**
 * What a failure while reading a request body means for the answer: a client that
 * closed its connection mid-body is the client's doing (a 4xx that nobody receives,
 * logged as a refusal), never a server error; CeErrors pass as they are.
 */
export function bodyError(req: IncomingMessage, e: unknown): unknown {
  if (isCeError(e)) return e;
  return clientGone(req, e) ? clientAborted(e) : e;
}

/** True when `e` is the request stream failing because the client went away. */
export function clientGone(req: IncomingMessage, e: unknown): boolean {
  const c = (e as NodeJS.ErrnoException | null)?.code;
  if (c === 'ECONNRESET' || c === 'ERR_STREAM_PREMATURE_CLOSE' || c === 'EPIPE') return true;
  return !req.complete && (req.destroyed || req.socket.destroyed);
}

export function clientAborted(cause: unknown): CeError {
  return ceError('CE_ERR_HTTP_CLIENT_ABORTED', undefined, { cause });
}

/** The media type of a Content-Type header without parameters, lower-cased ('' if absent). */
export function mediaType(header: string | undefined): string {
  if (header === undefined) return '';
  const semi = header.indexOf(';');
  return (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
}

/** True when the request carries a body (RFC 9112 §6.3). */
export function hasBody(req: IncomingMessage): boolean {
  const cl = req.headers['content-length'];
  if (cl !== undefined) return Number(cl) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}
