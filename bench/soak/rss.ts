/**
 * The server's resident memory over a run: VmRSS of /proc/<pid>/status every few
 * seconds (the pid is asked each time: under chaos the service is a new process after
 * every restart). "Flat" is judged between the median of the samples in the minute after
 * the warm-up and the median of the run's last minute: V8's pages rise and fall by 15-20
 * MiB with its collection cycle (docs/performance.md, "Soak memory"), so two single
 * samples compared one point of that swing with another, and the verdict was the swing's.
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

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * Growth from the median of the samples in [warmupS, warmupS + windowS) to the median of
 * those in the last windowS seconds (to the last sample). In a run too short for two such
 * windows, each is half of what follows the warm-up. Undefined when a window is empty.
 */
export function growth(samples: readonly RssSample[], warmupS: number, windowS = 60): RssGrowth | undefined {
  const endS = samples[samples.length - 1]?.s;
  if (endS === undefined) return undefined;
  const w = Math.min(windowS, (endS - warmupS) / 2);
  if (!(w > 0)) return undefined;
  const warmMiB = median(samples.filter((x) => x.s >= warmupS && x.s < warmupS + w).map((x) => x.mib));
  const endMiB = median(samples.filter((x) => x.s > endS - w).map((x) => x.mib));
  if (warmMiB === undefined || endMiB === undefined) return undefined;
  const g = endMiB - warmMiB;
  return {
    warmMiB: Math.round(warmMiB * 10) / 10,
    endMiB: Math.round(endMiB * 10) / 10,
    growthMiB: Math.round(g * 10) / 10,
    growthPct: Math.round((1000 * g) / warmMiB) / 10,
  };
}
