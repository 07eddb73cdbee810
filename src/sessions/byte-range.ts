/**
 * Byte ranges in both directions.
 *
 * `Range` on GET (RFC 9110 §14.2): one range `bytes=a-b`, `bytes=a-` or a suffix
 * `bytes=-n` (A-REX ignores suffixes; clients resuming a download use them). A start
 * at or past the end, or a zero suffix, is unsatisfiable (416 with `bytes *\/size`).
 * As the RFC allows, anything we do not serve as a single range is ignored and the
 * whole file is sent: another unit, several ranges, a malformed or inverted spec.
 *
 * `Content-Range` on PUT (A-REX's partial-upload extension) and PATCH: `bytes a-b/total` or
 * `bytes a-b/*`, end inclusive, `a <= b`, `b < total`. Anything else is a 400: a PUT
 * that cannot say where its bytes go must not write them somewhere.
 */
import { ceError } from '../errors/ce-error.js';

export type RangeRequest =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

/** Digits beyond this are certainly past any file end (and would lose precision). */
const MAX_DIGITS = 16;

export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'full' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return { kind: 'full' };
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return { kind: 'full' };
  if (a === '') {
    const n = b.length > MAX_DIGITS ? Infinity : Number(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = a.length > MAX_DIGITS ? Infinity : Number(a);
  const last = b === '' ? undefined : b.length > MAX_DIGITS ? Infinity : Number(b);
  if (last !== undefined && last < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(last ?? size - 1, size - 1) };
}

export interface ContentRange {
  readonly start: number;
  /** Inclusive. */
  readonly end: number;
  /** Complete length of the file, when the client knows it. */
  readonly total: number | undefined;
}

export function parseContentRange(header: string): ContentRange {
  const m = /^\s*bytes\s+(\d{1,16})-(\d{1,16})\/(\d{1,16}|\*)\s*$/i.exec(header);
  if (!m) throw badRange('expected bytes <first>-<last>/<total> or bytes <first>-<last>/*');
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === '*' ? undefined : Number(m[3]);
  if (end < start) throw badRange('the last byte is before the first');
  if (total !== undefined && end >= total) throw badRange('the range ends beyond the total length');
  return { start, end, total };
}

/**
 * Where the bytes of a PATCH go: its `Content-Range` (as a ranged PUT's), or `offset=N`
 * with the body's `Content-Length` (the range N..N+length-1). Exactly one of the two; a
 * PATCH that cannot say where its bytes go, or says it twice, or has no bytes, is a 400.
 */
export function patchRange(
  contentRange: string | undefined,
  offset: string | undefined,
  contentLength: string | undefined,
): ContentRange {
  if ((contentRange === undefined) === (offset === undefined))
    throw ceError(
      'CE_ERR_SESSION_PATCH_RANGE',
      contentRange === undefined
        ? 'PATCH needs Content-Range: bytes <first>-<last>/<total or *>, or offset=<byte> with Content-Length'
        : 'PATCH takes Content-Range or offset=, not both',
    );
  if (contentRange !== undefined) return parseContentRange(contentRange);
  const at = /^\d{1,16}$/.test(offset!.trim()) ? Number(offset!.trim()) : NaN;
  if (!Number.isSafeInteger(at)) throw ceError('CE_ERR_SESSION_PATCH_RANGE', 'offset= is a byte offset (0 or more)');
  const length = contentLength !== undefined && /^\d{1,16}$/.test(contentLength.trim()) ? Number(contentLength) : NaN;
  if (!(length > 0))
    throw ceError('CE_ERR_SESSION_PATCH_RANGE', 'offset= needs the body length in Content-Length (1 byte or more)');
  return { start: at, end: at + length - 1, total: undefined };
}

function badRange(detail: string) {
  return ceError('CE_ERR_SESSION_BAD_CONTENT_RANGE', `Malformed Content-Range: ${detail}`);
}
