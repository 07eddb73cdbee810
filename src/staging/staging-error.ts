/**
 * Staging failures are CeErrors (one catalog) that also say whether trying again can
 * help. The message is the text a user reads in the job's `failed` file, so it names
 * the file or URL (with secrets redacted, see redact.ts) and never a local path.
 */
import { CeError } from '../errors/ce-error.js';
import type { ErrorCode } from '../errors/catalog.js';

export interface StagingErrorOptions {
  /** Retrying may succeed (network trouble, 5xx, 429, timeouts, truncated bodies). */
  readonly transient?: boolean;
  /** Server's Retry-After, in milliseconds. */
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

export class StagingError extends CeError {
  readonly transient: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, detail: string, opts: StagingErrorOptions = {}) {
    super(code, detail, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.transient = opts.transient ?? false;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

export function stagingError(code: ErrorCode, detail: string, opts?: StagingErrorOptions): StagingError {
  return new StagingError(code, detail, opts);
}

export function isTransient(e: unknown): boolean {
  return e instanceof StagingError && e.transient;
}
