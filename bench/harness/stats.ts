/**
 * Order statistics of latency and throughput samples.
 *
 * Percentiles interpolate linearly between the two nearest ranks (the "type 7"
 * estimator of R and numpy's default): p0 is the minimum, p100 the maximum, and the
 * result never leaves the sample range. With few samples a p99 is therefore close to
 * the maximum, which is what a reader of "p99 over 100 jobs" expects.
 */

export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** p in [0, 100] of samples already sorted ascending; NaN for an empty list. */
export function percentileSorted(sortedAsc: ArrayLike<number>, p: number): number {
  const n = sortedAsc.length;
  if (n === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile out of range: ${p}`);
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, n - 1);
  const a = sortedAsc[lo] as number;
  const b = sortedAsc[hi] as number;
  return a + (b - a) * (rank - lo);
}

export function sortedCopy(samples: ArrayLike<number>): Float64Array {
  // A typed array sorts numerically; Array#sort would compare as strings.
  return Float64Array.from(samples).sort();
}

export function percentile(samples: ArrayLike<number>, p: number): number {
  return percentileSorted(sortedCopy(samples), p);
}

export function median(samples: ArrayLike<number>): number {
  return percentile(samples, 50);
}

export function summarize(samples: ArrayLike<number>): Summary {
  const s = sortedCopy(samples);
  let sum = 0;
  for (const v of s) sum += v;
  return {
    n: s.length,
    min: s.length ? (s[0] as number) : Number.NaN,
    p50: percentileSorted(s, 50),
    p90: percentileSorted(s, 90),
    p99: percentileSorted(s, 99),
    max: s.length ? (s[s.length - 1] as number) : Number.NaN,
    mean: s.length ? sum / s.length : Number.NaN,
  };
}

/**
 * Growable sample buffer for hot loops (a million latencies must not become a
 * million boxed numbers in a JS array).
 */
export class SampleBuffer {
  #data = new Float64Array(1024);
  #n = 0;

  push(v: number): void {
    if (this.#n === this.#data.length) {
      const next = new Float64Array(this.#data.length * 2);
      next.set(this.#data);
      this.#data = next;
    }
    this.#data[this.#n++] = v;
  }

  get length(): number {
    return this.#n;
  }

  values(): Float64Array {
    return this.#data.subarray(0, this.#n);
  }
}
