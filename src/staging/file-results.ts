/**
 * Per-file results and the job's staging result built from them: the reason a user can
 * act on (the failure that caused the others first), and the lines for the job's control
 * files. Messages shown to users never carry more than our own errors say.
 */
import type { ErrorCode } from '../errors/catalog.js';
import { isCeError } from '../errors/ce-error.js';
import { inputStatusLine, outputStatusLine, statisticsLine } from './control-lines.js';
import { parseSessionName } from './session-path.js';
import { StagingError, stagingError } from './staging-error.js';
import type { FileResult, StageResult, TransferKind } from './types.js';

/** A failure that only reflects the job's cancellation or another file's failure (reported as such later). */
export function isConsequence(r: FileResult, signal: AbortSignal): boolean {
  return (
    signal.aborted &&
    (r.code === undefined || r.code === 'CE_ERR_STAGING_CANCELLED' || r.code === 'CE_ERR_STAGING_SKIPPED')
  );
}

export function failedResult(
  name: string,
  kind: 'download' | 'upload',
  url: string | undefined,
  e: unknown,
  attempts: number,
  startTime?: Date,
  verb: 'download' | 'upload' = 'download',
): FileResult {
  const text =
    isCeError(e) && (e.code === 'CE_ERR_STAGING_SKIPPED' || e.code === 'CE_ERR_STAGING_CANCELLED')
      ? `${name}: ${e.message}`
      : verb === 'download'
        ? `Failed to download ${url ?? name}: ${errorText(e)}`
        : `Failed to upload ${name} to ${url ?? '?'}: ${errorText(e)}`;
  return {
    name,
    kind,
    ok: false,
    bytes: 0,
    attempts,
    ...(url === undefined ? {} : { url }),
    ...(startTime === undefined ? {} : { startTime, endTime: new Date() }),
    ...errorFields(text, e),
  };
}

/** A file the job's staging ended before: cancelled with the job, or skipped after another file failed. */
export function unfinishedResult(
  name: string,
  kind: TransferKind,
  url: string | undefined,
  why: 'cancelled' | 'skipped',
): FileResult {
  const e =
    why === 'cancelled'
      ? stagingError('CE_ERR_STAGING_CANCELLED', 'Data staging cancelled')
      : stagingError('CE_ERR_STAGING_SKIPPED', 'not completed because another input failed');
  return {
    name,
    kind,
    ok: false,
    bytes: 0,
    attempts: 0,
    ...(url === undefined ? {} : { url }),
    ...errorFields(`${name}: ${e.message}`, e),
  };
}

export function errorFields(text: string, e: unknown): { error: string; code?: ErrorCode } {
  return { error: text, ...(isCeError(e) ? { code: e.code } : {}) };
}

/** A message safe for users: ours as they are; anything else (a bug) reduced to its kind. */
export function errorText(e: unknown): string {
  if (e instanceof StagingError || isCeError(e)) return e.message;
  if ((e as { name?: string } | null)?.name === 'AbortError') return 'cancelled';
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? `local error (${code})` : 'internal error';
}

/** The job's result from its files' results: ok, the reason, the control-file lines, the bytes moved. */
export function stageResult(files: readonly FileResult[], cancelled: boolean, direction: 'in' | 'out'): StageResult {
  // The failure that caused the others comes first; skipped/cancelled ones only if nothing else failed.
  const failed = files.filter((f) => !f.ok);
  const primary = failed.filter((f) => f.code !== 'CE_ERR_STAGING_SKIPPED' && f.code !== 'CE_ERR_STAGING_CANCELLED');
  const failures = (primary.length > 0 ? primary : failed).map((f) => f.error ?? `${f.name}: failed`);
  const inputStatus: string[] = [];
  const outputStatus: string[] = [];
  const statistics: string[] = [];
  for (const f of files) {
    if (!f.ok || f.startTime === undefined || f.endTime === undefined || f.url === undefined) continue;
    const rel = parseSessionName(f.name).rel;
    if (direction === 'in') {
      inputStatus.push(inputStatusLine(rel));
      statistics.push(statisticsLine('inputfile', f.url, f.bytes, f.startTime, f.endTime, f.fromCache === true));
    } else {
      outputStatus.push(outputStatusLine(rel, f.url));
      statistics.push(statisticsLine('outputfile', f.url, f.bytes, f.startTime, f.endTime));
    }
  }
  return {
    ok: failed.length === 0 && !cancelled,
    cancelled,
    files,
    ...(failures[0] === undefined
      ? cancelled
        ? { failureReason: 'Data staging cancelled' }
        : {}
      : { failureReason: failures[0] }),
    failures,
    control: { inputStatus, outputStatus, statistics },
    bytes: files.reduce((n, f) => n + (f.ok && f.kind !== 'kept' ? f.bytes : 0), 0),
  };
}
