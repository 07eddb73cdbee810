/**
 * The bearer token of a request (RFC 6750 §2.1, the Authorization header only: tokens in
 * query strings end up in logs and are not accepted). The scheme is case-insensitive;
 * an Authorization header of another scheme is not a token and is ignored.
 */
export type BearerHeader = { readonly token: string } | { readonly malformed: true } | undefined;

/**
 * A request target fit for the log: the value of an `access_token` query parameter (RFC
 * 6750 §2.3, which Ceres does not accept but a client may still send) replaced.
 */
export function withoutQueryToken(url: string): string {
  return /access_token/i.test(url) ? url.replace(/([?&]access_token=)[^&#]*/gi, '$1[redacted]') : url;
}

/** `authorization`: the request's Authorization header. */
export function bearerOf(h: string | undefined): BearerHeader {
  if (h === undefined) return undefined;
  const m = /^\s*bearer(?:\s+(.*))?$/is.exec(h);
  if (m === null) return undefined;
  const token = (m[1] ?? '').trim();
  return token === '' || /\s/.test(token) ? { malformed: true } : { token };
}
