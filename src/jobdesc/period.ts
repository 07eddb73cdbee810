/**
 * ARC duration syntax ("Period"), used by xRSL cputime/walltime/lifetime/benchmarks and
 * ADL WipeTime.
 *
 * - ISO 8601 when it starts with `P`: `PnYnMnWnDTnHnMnS` (Y = 365 d, M = 30 d before the
 *   time part and minutes after `T` or after D/W/H, W = 7 d).
 * - Otherwise free format: numbers each followed (optionally after spaces) by a unit
 *   word whose first letter is w, d, h, m or s (`1 hour`, `10 minutes`, `1h30`); a
 *   trailing bare number takes the next smaller unit (after w: days, d: hours, h:
 *   minutes, m: seconds), or `defaultUnit` when it stands alone. Words not preceded by a
 *   number are ignored.
 *
 * A-REX turns a malformed value (`1:30`, `1.5h`, `P1X`) silently into 0, i.e. "no limit";
 * we report it as invalid (undefined) so the submission fails with a clear message.
 */

const UNIT: Record<string, number> = { w: 7 * 86400, d: 86400, h: 3600, m: 60, s: 1 };
const SMALLER: Record<string, number> = { w: 86400, d: 3600, h: 60, m: 1 };
/** Larger values are surely mistakes and would lose precision. */
const MAX_SECONDS = 1e15;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
function isLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
function isBlank(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/** Seconds, or undefined when `s` is not a valid period. `defaultUnit` in seconds. */
export function parsePeriod(s: string, defaultUnit: number): number | undefined {
  const t = s.trim();
  if (t.length === 0 || t.length > 256) return undefined;
  if (t.charCodeAt(0) === 0x50 /* P */) return parseIsoPeriod(t);
  let total = 0;
  let bare = defaultUnit;
  let numbers = 0;
  let i = 0;
  const n = t.length;
  while (i < n) {
    const c = t.charCodeAt(i);
    if (isBlank(c)) {
      i++;
      continue;
    }
    if (isLetter(c)) {
      while (i < n && isLetter(t.charCodeAt(i))) i++;
      continue;
    }
    if (!isDigit(c)) return undefined;
    const numStart = i;
    while (i < n && isDigit(t.charCodeAt(i))) i++;
    if (i - numStart > 15) return undefined;
    const num = Number(t.slice(numStart, i));
    numbers++;
    let k = i;
    while (k < n && isBlank(t.charCodeAt(k))) k++;
    if (k >= n) {
      total += num * bare;
      break;
    }
    const u = t[k]?.toLowerCase() ?? '';
    const unit = UNIT[u];
    if (unit === undefined || !isLetter(t.charCodeAt(k))) return undefined;
    total += num * unit;
    bare = SMALLER[u] ?? defaultUnit;
    i = k + 1;
    while (i < n && isLetter(t.charCodeAt(i))) i++;
    if (total > MAX_SECONDS) return undefined;
  }
  return numbers === 0 || total > MAX_SECONDS ? undefined : total;
}

function parseIsoPeriod(t: string): number | undefined {
  let total = 0;
  let afterT = false;
  // `M` means minutes after `T`, and (ARC's reading) also after a D, W or H.
  let minutes = false;
  let any = false;
  let i = 1;
  const n = t.length;
  while (i < n) {
    if (t[i] === 'T') {
      if (afterT) return undefined;
      afterT = minutes = true;
      i++;
      continue;
    }
    const start = i;
    while (i < n && isDigit(t.charCodeAt(i))) i++;
    if (i === start || i - start > 15 || i >= n) return undefined;
    const num = Number(t.slice(start, i));
    const u = t[i];
    i++;
    switch (u) {
      case 'Y':
        if (afterT) return undefined;
        total += num * 365 * 86400;
        break;
      case 'M':
        total += minutes ? num * 60 : num * 30 * 86400;
        break;
      case 'W':
        if (afterT) return undefined;
        total += num * 7 * 86400;
        minutes = true;
        break;
      case 'D':
        if (afterT) return undefined;
        total += num * 86400;
        minutes = true;
        break;
      case 'H':
        total += num * 3600;
        minutes = true;
        break;
      case 'S':
        total += num;
        break;
      default:
        return undefined;
    }
    any = true;
  }
  if (!any || total > MAX_SECONDS) return undefined;
  return total;
}
