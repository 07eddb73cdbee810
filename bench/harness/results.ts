/**
 * The shape of measured results, shared by the harness, the renderers and the JSON
 * files in bench/results/ (so a later run can be diffed against an earlier one).
 */
import type { ScenarioName } from './args.js';

export type Better = 'higher' | 'lower' | 'none';

export interface Metric {
  /** Stable key, e.g. `jobs_per_s`; rows of a comparison are matched on it. */
  readonly key: string;
  /** Label shown in tables, e.g. `jobs/s`, `p99 latency`. */
  readonly label: string;
  readonly value: number;
  readonly unit: string;
  readonly better: Better;
  /** Whether the comparison table shows a ratio for it (default: better !== 'none'). */
  readonly compare?: boolean;
}

export type ScenarioStatus = 'ok' | 'partial' | 'failed' | 'skipped';

export interface QuietReport {
  /** Seconds spent waiting for a quiet machine. */
  readonly waitedS: number;
  /** Machine CPU use (percent of one core) over the last second before starting. */
  readonly busyPct: number;
  /** The endpoint's own CPU use over that second, when its pids are known. */
  readonly serverBusyPct?: number;
  readonly quiet: boolean;
}

export interface ScenarioResult {
  readonly scenario: ScenarioName;
  readonly title: string;
  status: ScenarioStatus;
  reason?: string;
  readonly metrics: Metric[];
  /** Counts actually used (jobs, ids, seconds), for the reader and for ratios. */
  readonly params: Record<string, number | string>;
  readonly notes: string[];
  startedAt: string;
  seconds: number;
  quiet?: QuietReport;
  /** utime+stime of the server process(es) during the scenario, when known. */
  serverCpuS?: number;
}

export interface EndpointReport {
  readonly label: string;
  readonly url: string;
  version: string;
  pids: number[];
  serverKey: string;
  readonly results: ScenarioResult[];
  cleanup?: { created: number; cleaned: number; left: number; note?: string };
}

export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly node: string;
  readonly os: string;
}

export interface RunReport {
  readonly tool: 'ceres-bench';
  readonly kind: 'single' | 'compare';
  readonly date: string;
  readonly commit: string;
  readonly machine: MachineInfo;
  readonly quick: boolean;
  /** False while the run is going on, or when it was interrupted; results are saved after every scenario. */
  complete: boolean;
  readonly endpoints: EndpointReport[];
}

/** Ratio "how many times better the first is than the second", or undefined when not comparable. */
export function advantage(better: Better, first: number, second: number): number | undefined {
  if (!Number.isFinite(first) || !Number.isFinite(second)) return undefined;
  if (better === 'higher') return second > 0 ? first / second : undefined;
  if (better === 'lower') return first > 0 ? second / first : undefined;
  return undefined;
}
