/**
 * Which bytes of a ranged upload have arrived, per job and file, to tell when a
 * client-uploaded input is complete (A-REX does the same, in memory; A-REX §5.7).
 *
 * A file is complete when the received ranges cover `[0, total)` with `total` from
 * `Content-Range: bytes a-b/total`. A plain PUT (no Content-Range) is complete by
 * itself and never reaches the tracker, except to drop stale ranges.
 *
 * Memory is bounded: at most `maxFiles` files are tracked (least recently touched
 * evicted first; an evicted upload can still complete with a plain PUT or by
 * re-sending its ranges) and each holds at most `maxRanges` disjoint ranges (a write
 * that would exceed it is refused before its body is read). Adjacent and overlapping
 * ranges are merged, so an upload in order holds one range.
 */
export interface UploadTrackerOptions {
  readonly maxFiles?: number;
  readonly maxRanges?: number;
}

interface Tracked {
  total: number | undefined;
  /** Disjoint, sorted, non-adjacent half-open ranges [start, end). */
  ranges: [number, number][];
}

export class UploadTracker {
  readonly maxFiles: number;
  readonly maxRanges: number;
  /** Map order is recency order (re-inserted on every touch). */
  readonly #files = new Map<string, Tracked>();

  constructor(o: UploadTrackerOptions = {}) {
    this.maxFiles = o.maxFiles ?? 4096;
    this.maxRanges = o.maxRanges ?? 128;
  }

  /** Files currently tracked. */
  get size(): number {
    return this.#files.size;
  }

  /** False when recording `[start, end)` would exceed the per-file range limit. */
  canAccept(jobId: string, path: string, start: number, end: number): boolean {
    const t = this.#files.get(key(jobId, path));
    if (!t) return true;
    return merge(t.ranges, start, end).length <= this.maxRanges;
  }

  /**
   * Record that `[start, end)` of the file was written. `total` (the complete length)
   * may come with any range; a different total than before means a new upload and
   * restarts the tracking. Returns true once, when `[0, total)` is covered (the
   * entry is then dropped).
   */
  received(jobId: string, path: string, start: number, end: number, total: number | undefined): boolean {
    const k = key(jobId, path);
    let t = this.#files.get(k);
    if (t && total !== undefined && t.total !== undefined && t.total !== total) t = undefined;
    if (!t) t = { total, ranges: [] };
    this.#files.delete(k);
    if (total !== undefined) t.total = total;
    t.ranges = merge(t.ranges, start, end);
    const first = t.ranges[0];
    if (t.total !== undefined && first !== undefined && first[0] === 0 && first[1] >= t.total) return true;
    this.#files.set(k, t);
    while (this.#files.size > this.maxFiles) {
      const oldest = this.#files.keys().next().value as string;
      this.#files.delete(oldest);
    }
    return false;
  }

  /** Forget a file, or with `below` also everything under it as a directory. */
  forget(jobId: string, path: string, below = false): void {
    const k = key(jobId, path);
    this.#files.delete(k);
    if (!below) return;
    const prefix = path === '' ? `${jobId}\n` : `${k}/`;
    for (const x of [...this.#files.keys()]) if (x.startsWith(prefix)) this.#files.delete(x);
  }

  /** Forget every upload of a job (when it is cleaned or wiped). */
  forgetJob(jobId: string): void {
    this.forget(jobId, '', true);
  }
}

/** Paths never contain '\n' (refused by session-path.ts), so this key is unambiguous. */
function key(jobId: string, path: string): string {
  return `${jobId}\n${path}`;
}

function merge(ranges: readonly [number, number][], start: number, end: number): [number, number][] {
  const out: [number, number][] = [];
  let s = start;
  let e = end;
  let placed = false;
  for (const [a, b] of ranges) {
    if (b < s) out.push([a, b]);
    else if (a > e) {
      if (!placed) {
        out.push([s, e]);
        placed = true;
      }
      out.push([a, b]);
    } else {
      s = Math.min(s, a);
      e = Math.max(e, b);
    }
  }
  if (!placed) out.push([s, e]);
  return out;
}
