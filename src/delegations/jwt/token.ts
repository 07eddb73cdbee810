/**
 * JWT delegation (1.1): the token is stored as given and later sent unchanged as
 * `Authorization: Bearer` by data staging. The spec says the service does not verify
 * it (the storage endpoint does); what is checked here is only that it is plausibly a
 * token, so that a mistake (a proxy, a file name, a truncated header) is refused at
 * once rather than at transfer time:
 *
 *   - bounded size, visible ASCII only (it goes into an HTTP header later);
 *   - compact JWS: three base64url parts; header and payload decode to JSON objects
 *     and the header names an `alg`;
 *   - not already expired (`exp`, when present, is also when the delegation expires).
 *
 * Error texts never contain the token or any part of it.
 *
 * The two parts are decoded here rather than with jose: the delegation service is
 * loaded at start, and jose is loaded only when a token is verified (docs/performance.md,
 * "Memory").
 */
import { ceError } from '../../errors/ce-error.js';

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface CheckedToken {
  readonly token: string;
  /** From the `exp` claim (ms); undefined when the token has none. */
  readonly expiresAt: number | undefined;
}

export function checkDelegatedToken(token: string, maxBytes: number, now: number): CheckedToken {
  if (Buffer.byteLength(token, 'utf8') > maxBytes)
    throw ceError('CE_ERR_DELEG_TOKEN_TOO_LARGE', `Delegated token too large (more than ${maxBytes} bytes)`);
  if (!COMPACT_JWS.test(token))
    throw ceError(
      'CE_ERR_DELEG_TOKEN_MALFORMED',
      'Delegated token is not a JWT (expected three base64url parts separated by dots)',
    );
  let exp: unknown;
  try {
    const [h = '', p = ''] = token.split('.');
    const header = jsonObjectOf(h);
    if (typeof header.alg !== 'string' || header.alg === '') throw new Error('no alg');
    exp = jsonObjectOf(p).exp;
  } catch {
    throw ceError(
      'CE_ERR_DELEG_TOKEN_MALFORMED',
      'Delegated token is not a JWT (its header or payload is not a JSON object)',
    );
  }
  if (exp !== undefined && (typeof exp !== 'number' || !Number.isFinite(exp)))
    throw ceError('CE_ERR_DELEG_TOKEN_MALFORMED', 'Delegated token has a non-numeric exp claim');
  const expiresAt = exp === undefined ? undefined : Math.floor(exp * 1000);
  if (expiresAt !== undefined && expiresAt <= now)
    throw ceError(
      'CE_ERR_DELEG_EXPIRED',
      `Delegated token expired${Math.abs(expiresAt) < 8.64e15 ? ` at ${new Date(expiresAt).toISOString()}` : ''}`,
    );
  return { token, expiresAt };
}

/** A base64url part that decodes to a JSON object (as jose's decodeJwt and decodeProtectedHeader require). */
function jsonObjectOf(part: string): Record<string, unknown> {
  const v: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(part, 'base64url')));
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not a JSON object');
  return v as Record<string, unknown>;
}
