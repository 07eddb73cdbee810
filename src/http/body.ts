/**
 * Reading small request bodies (job id lists, job descriptions, delegation PEMs) with
 * a hard cap. A declared Content-Length over the cap is refused before reading; a
 * chunked body is cut off as soon as it passes the cap. File uploads never come here:
 * they are streamed to disk by the session handler.
 */
import type { IncomingMessage } from 'node:http';
import { ceError } from '../errors/ce-error.js';

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume();
    throw ceError('CE_ERR_HTTP_BODY_TOO_LARGE', `request body larger than ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      req.resume();
      throw ceError('CE_ERR_HTTP_BODY_TOO_LARGE', `request body larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
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
