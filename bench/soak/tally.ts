/**
 * What a soak or chaos run saw, request by request: answers by route and status, the
 * latencies, transport failures (no HTTP answer at all), and a few bodies of every 5xx
 * as evidence. A route is a method and a path shape ("POST jobs?action=new",
 * "PUT session/<file>"), never a concrete id, so the table stays short.
 *
 * Per-item status codes inside bulk answers are tallied too (route "... [item]"): a
 * service may answer 201 to the request and 500 for one job of it.
 */
import { SampleBuffer, summarize, type Summary } from '../harness/stats.js';
import { shortReason } from '../harness/failures.js';

export interface RouteTally {
  answers: number;
  readonly statuses: Record<string, number>;
  transport: number;
  readonly transportReasons: Record<string, number>;
  readonly latency: SampleBuffer;
  /** Up to three bodies of 5xx answers, for the report. */
  readonly samples5xx: string[];
}

export interface RouteSummary {
  readonly route: string;
  readonly answers: number;
  readonly statuses: Record<string, number>;
  readonly fiveXx: number;
  readonly transport: number;
  readonly transportReasons: Record<string, number>;
  readonly latencyMs: Summary;
  readonly samples5xx: string[];
}

const MAX_SAMPLES = 3;

export class Tally {
  readonly #routes = new Map<string, RouteTally>();
  readonly all = new SampleBuffer();

  #route(route: string): RouteTally {
    let r = this.#routes.get(route);
    if (r === undefined) {
      r = { answers: 0, statuses: {}, transport: 0, transportReasons: {}, latency: new SampleBuffer(), samples5xx: [] };
      this.#routes.set(route, r);
    }
    return r;
  }

  answer(route: string, status: number, ms: number, body?: Buffer | string): void {
    const r = this.#route(route);
    r.answers++;
    r.statuses[String(status)] = (r.statuses[String(status)] ?? 0) + 1;
    r.latency.push(ms);
    this.all.push(ms);
    if (status >= 500 && r.samples5xx.length < MAX_SAMPLES) {
      const text =
        body === undefined
          ? ''
          : (typeof body === 'string' ? body : body.toString('utf8', 0, Math.min(body.length, 300)))
              .replace(/\s+/g, ' ')
              .trim();
      r.samples5xx.push(`${status} ${text.slice(0, 200)}`);
    }
  }

  /** A per-item status of a bulk answer (no latency of its own). */
  item(route: string, status: number, reason: string): void {
    const r = this.#route(`${route} [item]`);
    r.answers++;
    r.statuses[String(status)] = (r.statuses[String(status)] ?? 0) + 1;
    if (status >= 500 && r.samples5xx.length < MAX_SAMPLES) r.samples5xx.push(`${status} ${reason.slice(0, 200)}`);
  }

  transport(route: string, e: unknown): void {
    const r = this.#route(route);
    r.transport++;
    // The reason without the endpoint's address, so equal failures fold into one line.
    const why = shortReason(e)
      .replace(/https?:\/\/\S+/g, '<endpoint>')
      .slice(0, 120);
    r.transportReasons[why] = (r.transportReasons[why] ?? 0) + 1;
  }

  get requests(): number {
    let n = 0;
    // Item tallies push no latency: this counts HTTP answers only.
    for (const r of this.#routes.values()) n += r.latency.length;
    return n;
  }

  get fiveXx(): number {
    return this.summary().reduce((a, r) => a + r.fiveXx, 0);
  }

  get transportFailures(): number {
    let n = 0;
    for (const r of this.#routes.values()) n += r.transport;
    return n;
  }

  summary(): RouteSummary[] {
    return [...this.#routes.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([route, r]) => ({
        route,
        answers: r.answers,
        statuses: { ...r.statuses },
        fiveXx: Object.entries(r.statuses).reduce((a, [s, n]) => a + (Number(s) >= 500 ? n : 0), 0),
        transport: r.transport,
        transportReasons: { ...r.transportReasons },
        latencyMs: summarize(r.latency.values()),
        samples5xx: [...r.samples5xx],
      }));
  }

  /** "POST jobs?action=new: 3 × 500; PUT session/<file>: 1 × 503" or "" when there were none. */
  fiveXxText(): string {
    return this.summary()
      .filter((r) => r.fiveXx > 0)
      .map(
        (r) =>
          `${r.route}: ${Object.entries(r.statuses)
            .filter(([s]) => Number(s) >= 500)
            .map(([s, n]) => `${n} × ${s}`)
            .join(', ')}${r.samples5xx[0] ? ` (e.g. "${r.samples5xx[0]}")` : ''}`,
      )
      .join('; ');
  }

  transportText(): string {
    return this.summary()
      .filter((r) => r.transport > 0)
      .map(
        (r) =>
          `${r.route}: ${Object.entries(r.transportReasons)
            .map(([k, n]) => `${n} × ${k}`)
            .join(', ')}`,
      )
      .join('; ');
  }
}
