/**
 * Reading small request bodies (job id lists, job descriptions, delegation PEMs) with
 * a hard cap. A declared Content-Length over the cap is refused before reading; a
 * chunked body is cut off as soon as it passes the cap. File uploads never come here:
 * they are streamed to disk by the session handler.
 */
import type { IncomingMessage } from 'node:http';
import { ceError, isCeError, type CeError } from '../errors/ce-error.js';

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume();
    throw ceError('CE_ERR_HTTP_BODY_TOO_LARGE', `request body larger than ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        req.resume();
        throw ceError('CE_ERR_HTTP_BODY_TOO_LARGE', `request body larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    throw bodyError(req, e);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
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
