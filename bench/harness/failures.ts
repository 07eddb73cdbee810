/**
 * What can go wrong between the harness and an endpoint, as one sentence a person can
 * act on. The harness prints these without a stack trace; anything not classified here
 * is a harness bug and keeps its stack.
 *
 * These are messages of a command-line tool, not answers of the service, so they do
 * not belong in the service's error catalog.
 */
import {
  CLOSED_CODES,
  TRUST_CODES as TRUST,
  UNREACHABLE_CODES as UNREACHABLE,
  errorChain,
  notTls,
  tlsAlertOf,
} from '../../src/client/transport-errors.js';

export { errorChain };

export type FailureKind =
  | 'usage' // bad command line or unreadable local file
  | 'unreachable' // nothing answers at the address
  | 'tls-trust' // the server's certificate is not trusted by the given CA
  | 'credentials' // the server refused our certificate (TLS alert, 401, 403)
  | 'not-arc' // something answers, but not the ARC REST interface
  | 'closed' // the server dropped the connection without an answer
  | 'http' // an unexpected HTTP answer during a scenario
  | 'budget'; // the scenario's time budget ran out

export class BenchError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'BenchError';
  }
}

/**
 * Turns a transport-level failure into a BenchError. `where` names the endpoint
 * (its URL), `phase` says what was being done, for the message.
 */
export function classifyTransportError(e: unknown, where: string): BenchError {
  if (e instanceof BenchError) return e;
  const { codes, messages } = errorChain(e);
  const has = (pred: (c: string) => boolean): boolean => codes.some(pred);
  const text = messages.join(' | ');
  if (has((c) => UNREACHABLE.has(c))) {
    const c = codes.find((x) => UNREACHABLE.has(x));
    return new BenchError('unreachable', `${where} is unreachable (${c}): is the service running and listening there?`);
  }
  if (has((c) => TRUST.has(c))) {
    const c = codes.find((x) => TRUST.has(x));
    return new BenchError(
      'tls-trust',
      `the server certificate of ${where} is not accepted (${c}): pass the CA that signed it with --ca`,
    );
  }
  if (
    has((c) => c.startsWith('ERR_OSSL_') || c === 'ERR_INVALID_ARG_TYPE' || c === 'ERR_TLS_INVALID_PROTOCOL_METHOD')
  ) {
    const c = codes.find((x) => x.startsWith('ERR_OSSL_')) ?? codes[0];
    if (c === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH')
      return new BenchError('usage', 'the --key does not belong to the --cert certificate');
    return new BenchError('usage', `the --cert/--key/--ca files are not usable PEM credentials (${c})`);
  }
  // A TLS alert from the peer: the OpenSSL code names it, e.g.
  // ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED, ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE,
  // ERR_SSL_TLSV1_ALERT_UNKNOWN_CA, ERR_SSL_TLSV1_ALERT_ACCESS_DENIED.
  const alert = tlsAlertOf(codes, text);
  if (alert !== undefined) {
    return new BenchError(
      'credentials',
      `${where} refused the client credentials during the TLS handshake (${alert}): check --cert/--key and that the server trusts their CA`,
    );
  }
  if (notTls(codes, text)) {
    return new BenchError('not-arc', `${where} does not speak TLS (plain HTTP on that port?)`);
  }
  if (has((c) => CLOSED_CODES.has(c))) {
    return new BenchError(
      'closed',
      `${where} closed the connection without an answer (${codes.join(', ')}${messages[0] ? `: ${messages[0]}` : ''})`,
    );
  }
  if (has((c) => c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT')) {
    return new BenchError('unreachable', `${where} did not answer in time (${codes.join(', ')})`);
  }
  return new BenchError(
    'unreachable',
    `request to ${where} failed: ${codes[0] ?? ''} ${messages[0] ?? String(e)}`.replace(/\s+/g, ' ').trim(),
  );
}

/** The message for a refusal given as an HTTP status. */
export function refusalFor(status: number, where: string): BenchError | undefined {
  if (status === 401 || status === 403) {
    return new BenchError(
      'credentials',
      `${where} refused the client credentials (HTTP ${status}): the certificate is not authorised there`,
    );
  }
  return undefined;
}

/** One line for the console: the message of a BenchError, or a short form of anything else. */
export function shortReason(e: unknown): string {
  if (e instanceof BenchError) return e.message;
  const { codes, messages } = errorChain(e);
  const m = messages[0] ?? String(e);
  return codes[0] !== undefined && !m.includes(codes[0]) ? `${codes[0]}: ${m}` : m;
}
