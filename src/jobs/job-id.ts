/**
 * Job ids: 128 random bits in lower-case base32 (a-z, 2-7), 26 characters. Unguessable
 * (the id is a capability for nothing by itself: every access is also owner-checked),
 * safe in paths and URLs, and short enough for the control-directory split.
 */
import { randomFillSync } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * Random bytes are drawn from the system generator 240 ids' worth at a time (one call
 * instead of one per id: a bulk POST makes 1,000 ids); each byte serves one id only.
 */
const ID_BYTES = 17;
const pool = Buffer.alloc(ID_BYTES * 240);
let used = pool.length;

export function newJobId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const b = pool.subarray(used, (used += ID_BYTES));
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of b) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** Syntactic check for ids coming from clients: anything else cannot be a job of ours. */
export function isPlausibleJobId(s: string): boolean {
  return s.length > 0 && s.length <= 64 && /^[A-Za-z0-9]+$/.test(s);
}
