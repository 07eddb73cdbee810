/**
 * The service's Prometheus metrics: one registry per service instance (never the
 * library's global one, so two services in one process, as in tests, never share
 * series), the process's default metrics (CPU, memory, heap, event-loop lag, handles)
 * and Ceres' own instruments. docs/operations.md (Metrics) lists every name.
 *
 * Cardinality is bounded by construction: label values are route templates, job
 * states, queue names from the configuration, catalog error codes, HTTP status codes,
 * batch command names and transfer directions; never a raw path, a DN or a job id.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds: sub-millisecond requests up to long uploads. */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Seconds a job spends in one state: from a moment to a week. */
const STATE_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400];
/** Seconds of one batch-system command. */
const COMMAND_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class CeresMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({ name: 'ceres_http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'], registers: [this.registry] });
  readonly httpDuration = new Histogram({ name: 'ceres_http_request_duration_seconds', help: 'Time to answer an HTTP request, by route template and method', labelNames: ['route', 'method'], buckets: REQUEST_BUCKETS, registers: [this.registry] });
  readonly refusals = new Counter({ name: 'ceres_refusals_total', help: 'Requests refused with a catalog error, by route template and error code', labelNames: ['route', 'code'], registers: [this.registry] });
  readonly submissions = new Counter({ name: 'ceres_job_submissions_total', help: 'Job descriptions submitted, by result (created, refused) and item status', labelNames: ['result', 'status'], registers: [this.registry] });
  readonly transitions = new Counter({ name: 'ceres_job_transitions_total', help: 'Job state changes, by state left and state entered', labelNames: ['from', 'to'], registers: [this.registry] });
  readonly stateSeconds = new Histogram({ name: 'ceres_job_state_duration_seconds', help: 'Time jobs spent in a state, observed when they leave it', labelNames: ['state'], buckets: STATE_BUCKETS, registers: [this.registry] });
  readonly stagingBytes = new Counter({ name: 'ceres_staging_bytes_total', help: 'Bytes moved by data staging, by direction (in: downloads, out: uploads)', labelNames: ['direction'], registers: [this.registry] });
  readonly stagingTransfers = new Counter({ name: 'ceres_staging_transfers_total', help: 'File transfers of data staging, by direction and result (ok, failed)', labelNames: ['direction', 'result'], registers: [this.registry] });
  readonly stagingFailures = new Counter({ name: 'ceres_staging_failures_total', help: 'Failed file transfers, by direction and error code', labelNames: ['direction', 'code'], registers: [this.registry] });
  readonly batchSeconds = new Histogram({ name: 'ceres_batch_command_duration_seconds', help: 'Time of batch-system operations and commands, by backend and command', labelNames: ['backend', 'command'], buckets: COMMAND_BUCKETS, registers: [this.registry] });
  readonly batchErrors = new Counter({ name: 'ceres_batch_command_errors_total', help: 'Batch-system operations and commands that failed, by backend and command', labelNames: ['backend', 'command'], registers: [this.registry] });
  readonly diskFree = new Gauge({ name: 'ceres_disk_free_bytes', help: 'Free bytes (for unprivileged users) on the file system, by area (sessions, state)', labelNames: ['area'], registers: [this.registry] });
  readonly diskLowWater = new Gauge({ name: 'ceres_disk_low_water_bytes', help: 'Configured low-water mark in bytes, by area (0: off)', labelNames: ['area'], registers: [this.registry] });
  readonly diskLow = new Gauge({ name: 'ceres_disk_low', help: '1 while free space is below the low-water mark (submissions and uploads are refused with 507), by area', labelNames: ['area'], registers: [this.registry] });
  readonly reloads = new Counter({ name: 'ceres_config_reloads_total', help: 'Configuration reloads on SIGHUP, by result (applied, refused)', labelNames: ['result'], registers: [this.registry] });

  constructor() {
    // process_cpu_*, process_resident_memory_bytes, nodejs_heap_*, nodejs_eventloop_lag_*, nodejs_gc_* ...
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
  }

  /** A gauge whose value is computed when scraped (never a counter that can drift). */
  gaugeAtScrape(name: string, help: string, labelNames: readonly string[], compute: (set: (labels: Record<string, string>, v: number) => void) => void | Promise<void>): void {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          await compute((labels, v) => this.set(labels, v));
        } catch {
          // The source is unavailable (store closed): no series, and ceres_ready says why.
        }
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
