/**
 * The query of `GET jobs` beyond the interface's `state=` (a Ceres extension,
 * docs/compatibility.md): `name=`, `queue=`, `vo=`, `submitted-since=`, `changed-since=`,
 * `limit=` and `cursor=`. A request without any of them is not touched by this file: it
 * lists every job as the interface says (the 1.0/1.1 answer, byte for byte).
 *
 * The cursor is opaque to clients: the last id of the page before, versioned and encoded,
 * so its form can change without a client noticing. A page is in id order, as the whole
 * list is, and a page full to `limit` carries the cursor of the next one in the header
 * `ceres-next-cursor` (1.x clients ignore unknown headers; the body keeps its shape).
 */
import { ceError } from '../../../errors/ce-error.js';
import type { JobListQuery } from '../../../store/job-list.js';
import type { RestState } from '../../../vocabulary/job-states.js';
import { VO_NAME } from '../../../config/patterns.js';

/** The parameters this extension adds; any one of them makes a request use it. */
export const LIST_EXTENSION_PARAMS = [
  'name',
  'queue',
  'vo',
  'submitted-since',
  'changed-since',
  'limit',
  'cursor',
] as const;

/** Where the next page starts (the answer's `ceres-next-cursor`). */
export const NEXT_CURSOR_HEADER = 'ceres-next-cursor';

const CURSOR_PREFIX = 'j1:';
/** Job ids (src/jobs/job-id.ts) and the ids of jobs stored before: plain alphanumerics. */
const CURSOR_ID = /^[A-Za-z0-9]{1,64}$/;
const VO = new RegExp(VO_NAME.pattern);
const MAX_TEXT = 256;

/** Whether `query` uses the extension (otherwise the list answers as the interface says). */
export function usesListExtension(query: ReadonlyMap<string, string>): boolean {
  return LIST_EXTENSION_PARAMS.some((p) => query.has(p));
}

/**
 * The filters and page of `query` (without owner or VO scope, which the caller adds),
 * `states` already checked. Throws a 400 naming the parameter for a bad value.
 */
export function parseListQuery(
  query: ReadonlyMap<string, string>,
  states: readonly RestState[] | undefined,
  maxLimit: number,
): Omit<JobListQuery, 'owner'> {
  const vo = query.get('vo');
  if (vo !== undefined && !VO.test(vo)) throw bad('vo', vo, 'a VO name (letters, digits, ".", "-", "_", at most 128)');
  const limit = query.get('limit');
  const cursor = query.get('cursor');
  return {
    states,
    name: text(query, 'name'),
    queue: text(query, 'queue'),
    vo,
    submittedSince: time(query, 'submitted-since'),
    changedSince: time(query, 'changed-since'),
    after: cursor === undefined ? undefined : cursorId(cursor),
    limit: limit === undefined ? undefined : pageSize(limit, maxLimit),
  };
}

/** The cursor of the page after one that ended with `lastId`. */
export function cursorAfter(lastId: string): string {
  return Buffer.from(CURSOR_PREFIX + lastId).toString('base64url');
}

function cursorId(raw: string): string {
  const t = raw.trim();
  const decoded = /^[A-Za-z0-9_-]{1,128}$/.test(t) ? Buffer.from(t, 'base64url').toString('latin1') : '';
  const id = decoded.startsWith(CURSOR_PREFIX) ? decoded.slice(CURSOR_PREFIX.length) : '';
  if (!CURSOR_ID.test(id))
    throw ceError('CE_ERR_JOB_BAD_CURSOR', `'${t.slice(0, 32)}' is not a cursor this service gave out`);
  return id;
}

function pageSize(raw: string, max: number): number {
  const t = raw.trim();
  const n = /^\d{1,9}$/.test(t) ? Number(t) : NaN;
  if (!(n >= 1 && n <= max)) throw bad('limit', t, `a whole number from 1 to ${max}`);
  return n;
}

function text(query: ReadonlyMap<string, string>, key: string): string | undefined {
  const v = query.get(key);
  if (v === undefined) return undefined;
  if (v === '' || v.length > MAX_TEXT) throw bad(key, v, `1 to ${MAX_TEXT} characters`);
  return v;
}

/**
 * A point in time: ISO 8601 with a time zone (`2026-12-01T10:00:00Z`), a date (midnight
 * UTC), or whole seconds since the epoch. Returned as milliseconds since the epoch.
 */
function time(query: ReadonlyMap<string, string>, key: string): number | undefined {
  const v = query.get(key);
  if (v === undefined) return undefined;
  const t = v.trim();
  let ms = NaN;
  if (/^\d{1,12}$/.test(t)) ms = Number(t) * 1000;
  else if (
    /^\d{4}-\d{2}-\d{2}$/.test(t) ||
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(t)
  )
    ms = Date.parse(t);
  if (!Number.isFinite(ms))
    throw bad(key, t, 'an ISO 8601 time with a zone (2026-12-01T10:00:00Z), a date, or seconds since 1970');
  return ms;
}

function bad(key: string, value: string, expected: string) {
  return ceError('CE_ERR_JOB_BAD_LIST_FILTER', `${key}='${value.slice(0, 32)}': expected ${expected}`);
}
