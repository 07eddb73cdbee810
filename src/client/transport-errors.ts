/**
 * The codes a failed HTTPS request carries, read through everything it wraps (undici
 * wraps the socket's error in `cause`; a connection attempt to several addresses
 * throws an AggregateError), sorted into what a person can act on. Shared by the
 * `ceres trace` client and the benchmark harness (bench/harness/failures.ts), which
 * word their own messages.
 */

interface Errorish {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Codes and messages of an error and everything it wraps (cause, AggregateError). */
export function errorChain(e: unknown): { codes: string[]; messages: string[] } {
  const codes: string[] = [];
  const messages: string[] = [];
  const seen = new Set<unknown>();
  const visit = (x: unknown, depth: number): void => {
    if (x === null || typeof x !== 'object' || seen.has(x) || depth > 8) return;
    seen.add(x);
    const o = x as Errorish;
    if (typeof o.code === 'string') codes.push(o.code);
    if (typeof o.message === 'string' && o.message !== '') messages.push(o.message);
    visit(o.cause, depth + 1);
    if (Array.isArray(o.errors)) for (const c of o.errors) visit(c, depth + 1);
  };
  visit(e, 0);
  return { codes, messages };
}

/** Nothing answers at the address (or not in time to connect). */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/** The server's certificate is not accepted: its chain, its dates or its name. */
export const TRUST_CODES: ReadonlySet<string> = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
]);

/** The connection ended without an answer. */
export const CLOSED_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED']);

/** A TLS alert from the peer (it refused our certificate, or wants one): the OpenSSL code names it. */
export function tlsAlertOf(codes: readonly string[], text: string): string | undefined {
  return codes.find((c) => /^ERR_SSL_.*ALERT/.test(c)) ?? (/alert/i.test(text) ? 'TLS alert' : undefined);
}

/** The peer does not speak TLS (plain HTTP on that port?). */
export function notTls(codes: readonly string[], text: string): boolean {
  return (
    codes.some((c) => c === 'ERR_SSL_WRONG_VERSION_NUMBER' || c === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') ||
    /wrong version number|packet length too long/i.test(text)
  );
}
