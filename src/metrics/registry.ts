/**
 * The service's Prometheus metrics: one registry per service instance (never the
 * library's global one, so two services in one process, as in tests, never share
 * series), the process's default metrics (CPU, memory, heap, event-loop lag, handles)
 * and Ceres' own instruments. docs/operations.md (Metrics) lists every name.
 *
 * Cardinality is bounded by construction: label values are route templates, job
 * states, queue names from the configuration, catalog error codes, HTTP status codes,
 * batch command names and transfer directions; never a raw path, a DN or a job id.
 *
 * Loaded only when a metrics listener is configured; otherwise the service records into
 * NO_METRICS (instruments.ts), which has the same calls and keeps nothing.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Metrics } from './instruments.js';

/** Seconds: sub-millisecond requests up to long uploads. */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Seconds a job spends in one state: from a moment to a week. */
const STATE_BUCKETS = [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400];
/** Seconds of one batch-system command. */
const COMMAND_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const counter = <L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]) =>
  new Counter<L>({ name, help, labelNames, registers: [registry] });
const gauge = <L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]) =>
  new Gauge<L>({ name, help, labelNames, registers: [registry] });
const histogram = <L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
) => new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });

export class CeresMetrics implements Metrics {
  readonly registry = new Registry();

  readonly httpRequests = counter(
    this.registry,
    'ceres_http_requests_total',
    'HTTP requests answered, by route template, method and status',
    ['route', 'method', 'status'],
  );
  readonly httpDuration = histogram(
    this.registry,
    'ceres_http_request_duration_seconds',
    'Time to answer an HTTP request, by route template and method',
    ['route', 'method'],
    REQUEST_BUCKETS,
  );
  readonly refusals = counter(
    this.registry,
    'ceres_refusals_total',
    'Requests refused with a catalog error, by route template and error code',
    ['route', 'code'],
  );
  readonly submissions = counter(
    this.registry,
    'ceres_job_submissions_total',
    'Job descriptions submitted, by result (created, refused) and item status',
    ['result', 'status'],
  );
  readonly transitions = counter(
    this.registry,
    'ceres_job_transitions_total',
    'Job state changes, by state left and state entered',
    ['from', 'to'],
  );
  readonly stateSeconds = histogram(
    this.registry,
    'ceres_job_state_duration_seconds',
    'Time jobs spent in a state, observed when they leave it',
    ['state'],
    STATE_BUCKETS,
  );
  readonly stagingBytes = counter(
    this.registry,
    'ceres_staging_bytes_total',
    'Bytes moved by data staging, by direction (in: downloads, out: uploads)',
    ['direction'],
  );
  readonly stagingTransfers = counter(
    this.registry,
    'ceres_staging_transfers_total',
    'File transfers of data staging, by direction and result (ok, failed)',
    ['direction', 'result'],
  );
  readonly stagingFailures = counter(
    this.registry,
    'ceres_staging_failures_total',
    'Failed file transfers, by direction and error code',
    ['direction', 'code'],
  );
  readonly batchSeconds = histogram(
    this.registry,
    'ceres_batch_command_duration_seconds',
    'Time of batch-system operations and commands, by backend and command',
    ['backend', 'command'],
    COMMAND_BUCKETS,
  );
  readonly batchErrors = counter(
    this.registry,
    'ceres_batch_command_errors_total',
    'Batch-system operations and commands that failed, by backend and command',
    ['backend', 'command'],
  );
  readonly diskFree = gauge(
    this.registry,
    'ceres_disk_free_bytes',
    'Free bytes (for unprivileged users) on the file system, by area (sessions, state)',
    ['area'],
  );
  readonly diskLowWater = gauge(
    this.registry,
    'ceres_disk_low_water_bytes',
    'Configured low-water mark in bytes, by area (0: off)',
    ['area'],
  );
  readonly diskLow = gauge(
    this.registry,
    'ceres_disk_low',
    '1 while free space is below the low-water mark (submissions and uploads are refused with 507), by area',
    ['area'],
  );
  readonly reloads = counter(
    this.registry,
    'ceres_config_reloads_total',
    'Configuration reloads on SIGHUP, by result (applied, refused)',
    ['result'],
  );
  readonly trustReloads = counter(
    this.registry,
    'ceres_trust_reloads_total',
    'Changes of the trusted CAs (part cas: the CA directory, looked at every tls.crlRecheckSeconds and on SIGHUP) and of the host certificate (part host_certificate: on SIGHUP), by result (applied; kept: the new state was not usable and the running one stays)',
    ['part', 'result'],
  );
  readonly apelMessages = counter(
    this.registry,
    'ceres_apel_messages_total',
    'Accounting messages sent to APEL through the messaging service, by kind (summary, individual, sync) and result (sent, failed)',
    ['kind', 'result'],
  );
  readonly apelRecords = counter(
    this.registry,
    'ceres_apel_records_sent_total',
    'APEL records (summary, job or sync records) in the acknowledged messages, by kind',
    ['kind'],
  );
  readonly apelSendSeconds = histogram(
    this.registry,
    'ceres_apel_send_duration_seconds',
    'Time to sign and publish one accounting message (acknowledged sends), by kind',
    ['kind'],
    COMMAND_BUCKETS,
  );

  constructor() {
    // process_cpu_*, process_resident_memory_bytes, nodejs_heap_*, nodejs_eventloop_lag_*, nodejs_gc_* ...
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
  }

  /** A gauge whose value is computed when scraped (never a counter that can drift). */
  gaugeAtScrape(
    name: string,
    help: string,
    labelNames: readonly string[],
    compute: (set: (labels: Record<string, string>, v: number) => void) => void | Promise<void>,
  ): void {
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
