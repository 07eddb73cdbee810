/**
 * The server's resident memory over a run: VmRSS of /proc/<pid>/status every few
 * seconds (the pid is asked each time: under chaos the service is a new process after
 * every restart). "Flat" is judged between the first sample after the warm-up and
 * the last one of the run.
 */
import { rssMiB } from '../harness/proc.js';

export interface RssSample {
  /** Seconds since the sampler started. */
  readonly s: number;
  readonly mib: number;
}

export class RssSampler {
  readonly samples: RssSample[] = [];
  readonly #t0 = Date.now();
  #timer: NodeJS.Timeout | undefined;

  constructor(readonly pids: () => readonly number[]) {}

  async sample(): Promise<RssSample | undefined> {
    const mib = await rssMiB(this.pids());
    if (mib === undefined) return undefined;
    const x = { s: Math.round((Date.now() - this.#t0) / 100) / 10, mib: Math.round(mib * 10) / 10 };
    this.samples.push(x);
    return x;
  }

  start(everyMs: number): void {
    this.#timer = setInterval(() => void this.sample(), everyMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  /** The samples of seconds [from, to], thinned to at most `max` for a report. */
  series(max = 60): RssSample[] {
    if (this.samples.length <= max) return [...this.samples];
    const step = this.samples.length / max;
    return Array.from({ length: max }, (_, i) => this.samples[Math.floor(i * step)] as RssSample).concat([
      this.samples[this.samples.length - 1] as RssSample,
    ]);
  }
}

export interface RssGrowth {
  readonly warmMiB: number;
  readonly endMiB: number;
  readonly growthMiB: number;
  readonly growthPct: number;
}

export function growth(warm: RssSample | undefined, end: RssSample | undefined): RssGrowth | undefined {
  if (warm === undefined || end === undefined) return undefined;
  const g = end.mib - warm.mib;
  return {
    warmMiB: warm.mib,
    endMiB: end.mib,
    growthMiB: Math.round(g * 10) / 10,
    growthPct: Math.round((1000 * g) / warm.mib) / 10,
  };
}
