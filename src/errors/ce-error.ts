/**
 * The one error type that crosses layer boundaries. Every expected failure is a
 * CeError carrying a stable code from the catalog; the HTTP layer turns it into a
 * response in exactly one place (src/http/error-handler.ts) and bulk operations turn
 * it into a per-item status-code/reason with the same mapping.
 *
 * Invariant: `message` is safe to show to the client. Never put credentials, proxy
 * or token material, file contents or internal paths into it; put ids instead.
 */
import { catalog, type ErrorCode } from './catalog.js';

export class CeError extends Error {
  override readonly name = 'CeError';
  readonly code: ErrorCode;
  readonly statusCode: number;
  /** Extra response headers (e.g. Allow for 405). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, detail?: string, options?: { headers?: Record<string, string>; cause?: unknown }) {
    const entry = catalog[code];
    super(detail ?? entry.message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.statusCode = entry.status;
    this.headers = options?.headers ?? {};
  }
}

/** Shorthand used everywhere: `throw ceError('CE_ERR_JOB_NOT_FOUND')`. */
export function ceError(
  code: ErrorCode,
  detail?: string,
  options?: { headers?: Record<string, string>; cause?: unknown },
): CeError {
  return new CeError(code, detail, options);
}

export function isCeError(e: unknown): e is CeError {
  return e instanceof CeError;
}
