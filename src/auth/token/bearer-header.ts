/**
 * The bearer token of a request (RFC 6750 §2.1, the Authorization header only: tokens in
 * query strings end up in logs and are not accepted). The scheme is case-insensitive;
 * an Authorization header of another scheme is not a token and is ignored.
 */
import type { IncomingMessage } from 'node:http';

export type BearerHeader = { readonly token: string } | { readonly malformed: true } | undefined;

export function bearerOf(req: IncomingMessage): BearerHeader {
  const h = req.headers.authorization;
  if (h === undefined) return undefined;
  const m = /^\s*bearer(?:\s+(.*))?$/is.exec(h);
  if (m === null) return undefined;
  const token = (m[1] ?? '').trim();
  return token === '' || /\s/.test(token) ? { malformed: true } : { token };
}
