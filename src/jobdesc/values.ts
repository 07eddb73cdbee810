/**
 * Strict scalar readers shared by both parsers. Strict on purpose: A-REX reads many
 * numbers leniently (`2GB` as 2, `abc` as 0), which turns typos into silently wrong
 * limits; we refuse them instead.
 */

/** A decimal integer with optional sign and surrounding blanks; undefined otherwise. */
export function parseStrictInt(s: string): number | undefined {
  const t = s.trim();
  let i = 0;
  if (t[0] === '+' || t[0] === '-') i = 1;
  if (i >= t.length || t.length - i > 15) return undefined;
  for (let k = i; k < t.length; k++) {
    const c = t.charCodeAt(k);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  return Number(t) + 0; // + 0 turns -0 into 0 (JSON has no -0)
}

/** A non-negative decimal integer up to 2^53; undefined otherwise. */
export function parseUnsigned(s: string): number | undefined {
  const t = s.trim();
  if (t.length === 0 || t.length > 16) return undefined;
  for (let k = 0; k < t.length; k++) {
    const c = t.charCodeAt(k);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** xRSL yes/no style: yes, true, no, false (any case). */
export function parseYesNo(s: string): boolean | undefined {
  const t = s.trim().toLowerCase();
  if (t === 'yes' || t === 'true') return true;
  if (t === 'no' || t === 'false') return false;
  return undefined;
}

/** XML Schema boolean as ADL uses it: true, false, 1, 0. */
export function parseXsdBoolean(s: string): boolean | undefined {
  const t = s.trim();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  return undefined;
}

/** Rounds a byte count up to whole MiB, the unit A-REX hands to the batch system. */
export function roundUpToMiB(bytes: number): number {
  const MiB = 1024 * 1024;
  return Math.ceil(bytes / MiB) * MiB;
}
