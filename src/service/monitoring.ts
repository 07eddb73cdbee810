/**
 * Wiring of metrics, health and disk-space watching for the composition root: one
 * registry, the scrape-time gauges, the readiness checks, the disk watch with its
 * alert metric and log lines, and the optional loopback listener (the health routes
 * and HTTP metrics of the main port are attached by the root from src/api) (docs/operations.md: Metrics, Health, Disk space).
 *
 * Without a metrics listener (the default) nothing could scrape the metrics, so prom-client
 * is not loaded at all: the wiring records into NO_METRICS, and the engine's observers and
 * the HTTP hooks, which exist only to record, are not installed (docs/performance.md, "Memory").
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { listenParts } from '../config/load.js';
import type { Db } from '../store/database.js';
import type { BatchBackend } from '../lrms/backend.js';
import type { CeresMetrics } from '../metrics/registry.js';
import { NO_METRICS, type Metrics } from '../metrics/instruments.js';
import { registerJobGauges, TransitionObserver, type StateCounts } from '../metrics/jobs.js';
import { registerDelegationGauges } from '../metrics/delegations.js';
import { startMetricsListener, type MetricsListener } from '../http/metrics-listener.js';
import { DiskWatch, type AreaStatus } from '../health/disk-space.js';
import { evaluate, storeCheck, type Readiness, type ReadinessCheck } from '../health/readiness.js';
import { batchCommandObserver, timedBackend } from '../metrics/batch.js';
import { stagingObserver } from '../metrics/staging.js';
import type { ItemResult } from '../jobs/job-service.js';
import type { EngineDeps } from './engine.js';
import type { ReloadPlan } from './live-config.js';

export interface MonitoringDeps {
  /** The live configuration view (disk marks are reloadable). */
  readonly config: Config;
  readonly log: Logger;
  readonly db: Db;
  readonly store: StateCounts;
  readonly paths: { readonly sessions: string; readonly state: string };
  /** The running batch backend; undefined until the engine has started. */
  readonly backend: () => BatchBackend | undefined;
}

/** The service's monitoring; prom-client and the registry are imported only when `metrics.listen` is set. */
export async function createMonitoring(d: MonitoringDeps): Promise<Monitoring> {
  if (d.config.metrics.listen === undefined) return new Monitoring(d, undefined);
  const { CeresMetrics } = await import('../metrics/registry.js');
  return new Monitoring(d, new CeresMetrics());
}

export class Monitoring {
  /** What the service records into: the registry, or NO_METRICS without a listener. */
  readonly metrics: Metrics;
  /** Whether anything is recorded (a metrics listener is configured). */
  readonly recording: boolean;
  readonly transitions: TransitionObserver | undefined;
  readonly disk: DiskWatch;
  readonly #d: MonitoringDeps;
  readonly #registry: CeresMetrics | undefined;
  readonly #checks: ReadinessCheck[];
  #listener: MetricsListener | undefined;

  constructor(d: MonitoringDeps, registry: CeresMetrics | undefined) {
    this.#d = d;
    this.#registry = registry;
    const m = (this.metrics = registry ?? NO_METRICS);
    this.recording = registry !== undefined;
    if (registry !== undefined) {
      this.transitions = new TransitionObserver(m);
      registerJobGauges(m, d.store);
      registerDelegationGauges(m, d.db);
    }
    this.disk = new DiskWatch({
      paths: d.paths,
      marks: () => ({ sessions: d.config.disk.sessionsLowWater, state: d.config.disk.stateLowWater }),
      intervalMs: () => d.config.disk.checkIntervalSeconds * 1000,
      onCheck: (all) => {
        for (const s of all) {
          m.diskFree.set({ area: s.area }, s.freeBytes);
          m.diskLowWater.set({ area: s.area }, s.lowWaterBytes);
          m.diskLow.set({ area: s.area }, s.low ? 1 : 0);
        }
      },
      onChange: (s: AreaStatus) =>
        s.low
          ? d.log.warn(
              { area: s.area, path: s.path, freeBytes: s.freeBytes, lowWaterBytes: s.lowWaterBytes, error: s.error },
              'free disk space below the low-water mark: submissions and uploads are refused',
            )
          : d.log.info(
              { area: s.area, path: s.path, freeBytes: s.freeBytes, lowWaterBytes: s.lowWaterBytes },
              'free disk space back above the low-water mark',
            ),
    });
    this.#checks = [
      storeCheck(d.db),
      {
        name: 'batch',
        check: async () => {
          const b = d.backend();
          if (b === undefined) return 'batch backend not started';
          return b.usable ? b.usable() : undefined;
        },
      },
      {
        name: 'disk',
        check: () => {
          const low = this.disk.low();
          return low.length === 0 ? undefined : low.map((s) => `${s.area} below its low-water mark`).join('; ');
        },
      },
    ];
    m.gaugeAtScrape(
      'ceres_ready',
      '1 when the readiness checks pass (store, batch backend, disk), as /health/ready answers',
      [],
      async (set) => set({}, (await this.readiness()).ready ? 1 : 0),
    );
  }

  /**
   * The engine's observers: batch operations timed, transitions counted and timed, staging
   * results. None when nothing is recorded (no timing proxy, no per-job entry kept).
   */
  engineObservers(): EngineDeps['observe'] {
    const transitions = this.transitions;
    if (transitions === undefined) return undefined;
    return {
      backend: (b) => timedBackend(b, batchCommandObserver(this.metrics, b.name)),
      commands: (backend) => batchCommandObserver(this.metrics, backend),
      transition: (t) => transitions.seen(t),
      staged: stagingObserver(this.metrics),
    };
  }

  /** A submission's items: one log line per created job, counts by result and item status. */
  submitted(owner: string, results: readonly ItemResult[]): void {
    // Counted per status, then one increment each (a bulk POST has up to thousands of items).
    const counts = new Map<number, number>();
    for (const r of results) {
      counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      if (r.id !== undefined) this.#d.log.info({ job: r.id, owner }, 'job submitted');
    }
    for (const [status, n] of counts)
      this.metrics.submissions.inc({ result: status === 201 ? 'created' : 'refused', status: String(status) }, n);
  }

  /** A reload's outcome, in the log and the metrics. */
  reloaded(plan: ReloadPlan): void {
    this.metrics.reloads.inc({ result: 'applied' });
    this.#d.log.info(
      { applied: plan.applied },
      plan.applied.length > 0 ? 'configuration reloaded' : 'configuration reloaded: no reloadable key changed',
    );
    for (const key of plan.ignored)
      this.#d.log.warn(
        { key },
        'configuration key changed but not reloadable: the running value is kept until a restart',
      );
  }

  /** A reload refused (the new file is invalid): the running configuration stays. */
  reloadRefused(reason: string): void {
    this.metrics.reloads.inc({ result: 'refused' });
    this.#d.log.error({ reason }, 'configuration not reloaded: the running configuration is kept');
  }

  /** Another readiness check, wired by the root (the trust store's). */
  addCheck(c: ReadinessCheck): void {
    this.#checks.push(c);
  }

  readiness(): Promise<Readiness> {
    return evaluate(this.#checks);
  }

  async start(): Promise<void> {
    this.disk.start();
    const listen = this.#d.config.metrics.listen;
    if (listen === undefined || this.#registry === undefined) return;
    const { host, port } = listenParts(listen);
    this.#listener = await startMetricsListener({
      host,
      port,
      metrics: this.#registry,
      readiness: () => this.readiness(),
      onError: (e) => this.#d.log.error({ err: e }, 'metrics listener request failed'),
    });
    this.#d.log.info({ listen: `${host}:${this.#listener.port}` }, 'metrics listener started');
  }

  /** The loopback listener's port (0 picks one: tests read it here and in the start line). */
  get listenerPort(): number | undefined {
    return this.#listener?.port;
  }

  async stop(): Promise<void> {
    this.disk.stop();
    await this.#listener?.close();
  }
}
