/**
 * Turn what the network stack throws into StagingErrors a user can read, with the
 * retry class: resets, refusals, timeouts and truncated bodies are transient; TLS
 * trust failures, unknown hosts and local file errors are not. Texts are our own
 * (undici/OpenSSL messages can carry internal details), with the system code.
 */
import { STATUS_CODES } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { StagingError, stagingError } from '../staging-error.js';

const TRANSIENT_STATUS = new Set([408, 425, 429]);

export function statusError(
  status: number,
  statusText: string | undefined,
  headers: IncomingHttpHeaders,
): StagingError {
  const transient = TRANSIENT_STATUS.has(status) || (status >= 500 && status !== 501 && status !== 505);
  const text =
    statusText !== undefined && /^[\x20-\x7e]{1,100}$/.test(statusText)
      ? statusText
      : (STATUS_CODES[status] ?? 'Unknown status');
  const retryAfterMs = transient ? parseRetryAfter(headers['retry-after']) : undefined;
  return stagingError('CE_ERR_STAGING_REMOTE_STATUS', `${status} ${text}`, {
    transient,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

export function parseRetryAfter(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return undefined;
  if (/^\d+$/.test(s.trim())) return Number(s.trim()) * 1000;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}

function codeOf(e: unknown): string | undefined {
  // undici wraps the system error (UND_ERR_SOCKET around ECONNRESET...): prefer the specific one.
  const codes: string[] = [];
  for (
    let x: unknown = e, depth = 0;
    x !== null && typeof x === 'object' && depth < 5;
    x = (x as { cause?: unknown }).cause, depth++
  ) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes.find((c) => c !== 'UND_ERR_SOCKET') ?? codes[0];
}

const TLS_TRUST = /^(UNABLE_TO_|SELF_SIGNED|DEPTH_ZERO|CERT_|ERR_TLS_CERT|HOSTNAME_MISMATCH|ERR_TLS_)/;

/** Classify an error thrown by a request or a body stream. */
export function networkError(e: unknown, signal?: AbortSignal): StagingError {
  if (e instanceof StagingError) return e;
  if (signal?.aborted === true || (e as { name?: string } | null)?.name === 'AbortError') {
    return stagingError('CE_ERR_STAGING_CANCELLED', 'cancelled', { cause: e });
  }
  const code = codeOf(e) ?? 'unknown';
  const t = (
    msg: string,
    c: 'CE_ERR_STAGING_NETWORK' | 'CE_ERR_STAGING_TIMEOUT' = 'CE_ERR_STAGING_NETWORK',
  ): StagingError => stagingError(c, msg, { transient: true, cause: e });
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return t('timed out connecting', 'CE_ERR_STAGING_TIMEOUT');
    case 'UND_ERR_HEADERS_TIMEOUT':
      return t('timed out waiting for the response', 'CE_ERR_STAGING_TIMEOUT');
    case 'UND_ERR_BODY_TIMEOUT':
      return t('transfer stalled (no data received)', 'CE_ERR_STAGING_TIMEOUT');
    case 'ECONNREFUSED':
      return t('connection refused');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return t('connection closed by the server before the transfer completed');
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return t('truncated response body');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EAI_AGAIN':
    case 'ENETDOWN':
      return t(`network unreachable (${code})`);
    case 'ENOTFOUND':
      return stagingError('CE_ERR_STAGING_NETWORK', 'host not found', { cause: e });
    default:
      break;
  }
  if (code.startsWith('ERR_SSL_') && code.includes('ALERT')) {
    return stagingError(
      'CE_ERR_STAGING_TLS',
      `the server rejected the TLS connection (${code.replace(/^ERR_SSL_/, '')}); is the delegated credential accepted there?`,
      { cause: e },
    );
  }
  if (TLS_TRUST.test(code) || code.startsWith('ERR_SSL_')) {
    return stagingError('CE_ERR_STAGING_TLS', `TLS failure: server certificate not accepted (${code})`, { cause: e });
  }
  const syscall = (e as { syscall?: unknown } | null)?.syscall;
  if (typeof syscall === 'string' && !['connect', 'read', 'getaddrinfo'].includes(syscall)) {
    return stagingError('CE_ERR_STAGING_LOCAL_IO', `local file system error (${code})`, { cause: e });
  }
  return t(`network error (${code})`);
}
