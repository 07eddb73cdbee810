/**
 * Absolute times in descriptions (xRSL `starttime`, ADL `ng:StartTime`,
 * `ExpirationTime`), normalised to ISO 8601 UTC. Accepted forms:
 * `2024-05-01T12:00:00Z` (optional fraction, `Z` or `±hh[:mm]`), the same with a space
 * instead of `T`, a date alone, and the compact `20240501120000Z` of A-REX's own files.
 * A time without zone is taken as UTC.
 */

// Fixed-shape patterns, no nested quantifiers: linear on any input (and inputs are capped).
const EXTENDED =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})T?(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

export function parseArcTime(s: string): string | undefined {
  const t = s.trim();
  if (t.length > 64) return undefined;
  let y, mo, d, h, mi, sec, frac, zone: string | undefined;
  const ext = EXTENDED.exec(t);
  if (ext) [, y, mo, d, h, mi, sec, frac, zone] = ext;
  else {
    const compact = COMPACT.exec(t);
    if (!compact) return undefined;
    [, y, mo, d, h, mi, sec, zone] = compact;
  }
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(sec ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  const base = new Date(Date.UTC(2000, month - 1, day, hour, minute, Math.min(second, 59), ms));
  base.setUTCFullYear(year, month - 1, day);
  if (base.getUTCDate() !== day) return undefined; // 31 April and friends
  let epoch = base.getTime();
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const zh = Number(digits.slice(0, 2));
    const zm = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (zh > 23 || zm > 59) return undefined;
    epoch -= sign * (zh * 60 + zm) * 60_000;
  }
  const date = new Date(epoch);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
