/**
 * What the service records into, as the wiring and the observers see it: the
 * instruments of CeresMetrics (registry.ts, backed by prom-client) by their calls alone,
 * so that a service without a metrics listener gets NO_METRICS instead and never loads
 * prom-client (docs/performance.md, "Memory"). This module imports nothing.
 */
export type Labels<L extends string> = Partial<Record<L, string | number>>;

export interface CounterLike<L extends string> {
  inc(labels: Labels<L>, value?: number): void;
}
export interface GaugeLike<L extends string> {
  set(labels: Labels<L>, value: number): void;
}
export interface HistogramLike<L extends string> {
  observe(labels: Labels<L>, value: number): void;
}

export interface Metrics {
  readonly httpRequests: CounterLike<'route' | 'method' | 'status'>;
  readonly httpDuration: HistogramLike<'route' | 'method'>;
  readonly refusals: CounterLike<'route' | 'code'>;
  readonly submissions: CounterLike<'result' | 'status'>;
  readonly transitions: CounterLike<'from' | 'to'>;
  readonly stateSeconds: HistogramLike<'state'>;
  readonly stagingBytes: CounterLike<'direction'>;
  readonly stagingTransfers: CounterLike<'direction' | 'result'>;
  readonly stagingFailures: CounterLike<'direction' | 'code'>;
  readonly batchSeconds: HistogramLike<'backend' | 'command'>;
  readonly batchErrors: CounterLike<'backend' | 'command'>;
  readonly diskFree: GaugeLike<'area'>;
  readonly diskLowWater: GaugeLike<'area'>;
  readonly diskLow: GaugeLike<'area'>;
  readonly reloads: CounterLike<'result'>;
  readonly trustReloads: CounterLike<'part' | 'result'>;
  readonly apelMessages: CounterLike<'kind' | 'result'>;
  readonly apelRecords: CounterLike<'kind'>;
  readonly apelSendSeconds: HistogramLike<'kind'>;
  /** A gauge whose value is computed when scraped (never a counter that can drift). */
  gaugeAtScrape(
    name: string,
    help: string,
    labelNames: readonly string[],
    compute: (set: (labels: Record<string, string>, v: number) => void) => void | Promise<void>,
  ): void;
}

const none = { inc() {}, set() {}, observe() {} };

/**
 * The stand-in when metrics are off (no `metrics.listen`): every instrument takes its
 * values and keeps nothing; scrape-time gauges are never computed (nothing scrapes).
 */
export const NO_METRICS: Metrics = Object.freeze({
  httpRequests: none,
  httpDuration: none,
  refusals: none,
  submissions: none,
  transitions: none,
  stateSeconds: none,
  stagingBytes: none,
  stagingTransfers: none,
  stagingFailures: none,
  batchSeconds: none,
  batchErrors: none,
  diskFree: none,
  diskLowWater: none,
  diskLow: none,
  reloads: none,
  trustReloads: none,
  apelMessages: none,
  apelRecords: none,
  apelSendSeconds: none,
  gaugeAtScrape() {},
});
