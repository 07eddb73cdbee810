/**
 * The allowance of extra upload buffering shared by all uploads (file-sink.ts, `spare`).
 *
 * Why uploads buffer more than one batch: when a write into the page cache is slow (the
 * kernel backing fresh pages, other disk traffic), the body's pieces would otherwise wait
 * in the stream's buffer as the parser's Buffers and live through young-generation
 * collections; promoted, their memory outside the heap makes V8 start full mark-compacts
 * of the whole service heap, 12–52 per GiB on such uploads instead of 1–4
 * (docs/performance.md, "Uploads"). Copied into recycled batches, they die at once.
 *
 * Why an allowance: memory per upload stays bounded by a few batches however many
 * uploads run, and the total extra is bounded for the whole process; an upload that
 * finds it spent waits as before (backpressure), it is never refused for it.
 */
import type { SpareBatches } from './file-sink.js';

/** An allowance of `total` batches, at most `maxBatches` of them to one sink. */
export function spareBatches(total: number, maxBatches: number): SpareBatches & { readonly lent: number } {
  let lent = 0;
  return {
    maxBatches,
    get lent() {
      return lent;
    },
    take() {
      if (lent >= total) return false;
      lent++;
      return true;
    },
    give(n: number) {
      lent = Math.max(0, lent - n);
    },
  };
}

/** Extra batches (1 MiB each) one upload may hold while its writes are slow. */
export const UPLOAD_SPARE_PER_UPLOAD = 3;
/** Extra batches all uploads together may hold: 64 MiB. */
export const UPLOAD_SPARE_TOTAL = 64;

export const uploadSpare = spareBatches(UPLOAD_SPARE_TOTAL, UPLOAD_SPARE_PER_UPLOAD);
