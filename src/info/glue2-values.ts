/**
 * Value formatting shared by the GLUE2 builders. Every formatter returns `undefined`
 * for a value that is unknown or unusable, and the builders drop elements whose
 * value is `undefined`: the documents never carry an invented or garbled value.
 */

/** A point in time: a Date, or seconds since the epoch (what the job store keeps). */
export type TimeValue = Date | number;

/**
 * GLUE2 / A-REX time format `YYYY-MM-DDThh:mm:ssZ`, always UTC, no fraction (pyarcrest
 * parses it with `%Y-%m-%dT%H:%M:%SZ`, which rejects fractions and offsets).
 */
export function glueTime(t: TimeValue | undefined): string | undefined {
  if (t === undefined) return undefined;
  const ms = typeof t === 'number' ? t * 1000 : t.getTime();
  if (!Number.isFinite(ms)) return undefined;
  const sec = Math.floor(ms / 1000);
  // A job's times are few and the jobs of one answer share many of them (submitted in one
  // bulk POST, ended together): a direct-mapped cache of the last texts saves the Date.
  const slot = sec & (TIME_CACHE_SIZE - 1);
  if (timeKeys[slot] === sec) return timeTexts[slot];
  const d = new Date(sec * 1000);
  if (Number.isNaN(d.getTime())) return undefined;
  const iso = d.toISOString(); // YYYY-MM-DDThh:mm:ss.000Z for years 0..9999
  if (iso.length !== 24) return undefined; // extended years (+010000-...) are not GLUE2 times
  const text = iso.slice(0, 19) + 'Z';
  timeKeys[slot] = sec;
  timeTexts[slot] = text;
  return text;
}

const TIME_CACHE_SIZE = 256;
// NaN never equals a key, so an empty slot never hits.
const timeKeys = new Float64Array(TIME_CACHE_SIZE).fill(Number.NaN);
const timeTexts = new Array<string | undefined>(TIME_CACHE_SIZE).fill(undefined);

/** Integer text (truncated toward zero); `undefined` for absent, NaN or infinite input. */
export function intText(n: number | undefined): string | undefined {
  if (n === undefined || !Number.isFinite(n)) return undefined;
  return String(Math.trunc(n));
}

/** Non-negative integer text; negative values are treated as unknown. */
export function countText(n: number | undefined): string | undefined {
  if (n === undefined || !Number.isFinite(n) || n < 0) return undefined;
  return String(Math.trunc(n));
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Bytes as whole MB (GLUE2 memory unit), rounded down; used for limits and sizes. */
export function bytesToMb(bytes: number | undefined): number | undefined {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return undefined;
  return Math.floor(bytes / MIB);
}

/** Bytes as whole GB (GLUE2 WorkingArea unit), rounded down. */
export function bytesToGb(bytes: number | undefined): number | undefined {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return undefined;
  return Math.floor(bytes / GIB);
}

/** GLUE2 boolean text. */
export function boolText(b: boolean | undefined): string | undefined {
  return b === undefined ? undefined : b ? 'true' : 'false';
}

/** A string that is present only when it has visible content. */
export function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s;
}
