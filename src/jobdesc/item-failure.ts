/**
 * A per-item failure: one description of a submission that cannot become a job. It
 * never affects the other items of the same request; the jobs API renders it as one
 * `job` element with `status-code` = `status` and `reason` = `reason`.
 */
import { catalog, type ErrorCode } from '../errors/catalog.js';

export interface ItemFailure {
  readonly ok: false;
  /** Per-item status-code (always > 400, see src/errors/codes/jobdesc.ts). */
  readonly status: number;
  /** Client-facing reason; starts with A-REX's text where A-REX has one. */
  readonly reason: string;
  readonly code: ErrorCode;
  /**
   * The 1-based line of the submitted body the failure concerns, where the parser knows
   * it. Never part of a REST answer (whose reason texts stay A-REX's); the web's
   * submission form shows the message beside that line.
   */
  readonly line?: number;
}

/** Failure with the catalog message, or `reason` when the text carries specifics. */
export function itemFailure(code: ErrorCode, reason?: string, line?: number): ItemFailure {
  const entry = catalog[code];
  const f: ItemFailure = { ok: false, status: entry.status, reason: reason ?? entry.message, code };
  return line === undefined ? f : { ...f, line };
}
