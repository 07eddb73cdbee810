/**
 * The site's load over time (site-buckets.ts: the records and their bound), kept in the
 * `site_series` table: one row per bucket, rewritten by a tick (once per 5 minutes, and at
 * a clean stop), never per job event. A tick counts two things:
 *
 *  - the state changes since the last tick, from the durable job event sequence the store
 *    already writes with every transition (job_events): ends per outcome, stage-in and
 *    stage-out passages, wait and run times. The last sequence number counted is stored
 *    with the bucket, so a restart (even after kill -9) resumes where the counting stopped
 *    and counts every change once; a change is put in the bucket of its own time;
 *  - a snapshot of the active jobs per REST state, queue, VO and route (one GROUP BY).
 *
 * Clocks: a bucket is never written before the newest one (a change stamped earlier goes
 * into the newest), so a small step back of the clock merges into the newest bucket; a step
 * back of more than MAX_CLOCK_STEP_BACK_MS drops the buckets "in the future" and starts
 * again from the new time. A step forward leaves a gap. The newest `keep` buckets of each
 * length are kept, whatever the clock says, so the table stays bounded.
 */
import type { Db } from './database.js';
import { sqlStates } from './state-list.js';
import {
  ENDED_REST_STATES,
  FINAL_STATES,
  OUTCOME_REST_STATES,
  REST_STATES,
  type RestState,
} from '../vocabulary/job-states.js';
import {
  binOf,
  bucketStart,
  emptyBucket,
  keyOf,
  merged,
  parseBucket,
  RESOLUTIONS,
  type BucketData,
  type Dimension,
} from './site-buckets.js';

/** How often a tick runs by default: once per 5-minute bucket. */
export const TICK_MS = 300_000;
/** A larger step back of the clock is taken as a corrected clock, not as noise. */
export const MAX_CLOCK_STEP_BACK_MS = 3600_000;
/** Changes read per statement (a tick after a long stop reads several slices). */
const EVENT_SLICE = 20_000;

const ACTIVE: readonly RestState[] = REST_STATES.filter((s) => !ENDED_REST_STATES.includes(s));
const STAGE_IN: RestState = 'PREPARING';
const STAGE_OUT: RestState = 'FINISHING';
const RUNNING: RestState = 'RUNNING';

interface EventRow {
  seq: number;
  state: string;
  previous: string | null;
  at: number;
  createdAt: number | null;
  startedAt: number | null;
  endedAt: number | null;
}

/** The VO of a job: its first FQAN's (`/atlas/Role=x` -> `atlas`); '' without one. */
export function voOfFqans(fqans: string | null): string {
  if (fqans === null) return '';
  try {
    const list = JSON.parse(fqans) as unknown;
    return Array.isArray(list) && typeof list[0] === 'string' ? (list[0].split('/')[1] ?? '') : '';
  } catch {
    return '';
  }
}

export interface SeriesPoint {
  /** Bucket start (ms). */
  readonly start: number;
  readonly data: BucketData;
}

export class SiteSeries {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #events;
  readonly #snapshot;
  readonly #read;
  readonly #write;
  readonly #prune;
  readonly #dropAfter;
  readonly #range;
  readonly #latestSeq;
  #seq: number;
  /** Start of the newest 5-minute bucket written (ms); 0: none. */
  #newest: number;
  #timer: NodeJS.Timeout | undefined;
  readonly #tickMs: number;
  #generation = 0;

  /** `tickMs`: how often the current bucket is rewritten (at most once per 5-minute bucket by default). */
  constructor(db: Db, now: () => number = Date.now, tickMs: number = TICK_MS) {
    this.#db = db;
    this.#now = now;
    this.#tickMs = tickMs;
    this.#events = db.prepare(
      `SELECT e.seq AS seq, e.state AS state, e.previous_state AS previous, e.at AS at,
              j.created_at AS createdAt, j.started_at AS startedAt, j.ended_at AS endedAt
         FROM job_events e LEFT JOIN jobs j ON j.id = e.job_id
        WHERE e.seq > ? ORDER BY e.seq LIMIT ${EVENT_SLICE}`,
    );
    this.#snapshot = db.prepare(
      `SELECT rest_state AS state, queue, ifnull(CASE WHEN json_valid(route) THEN json_extract(route, '$.name') END, '') AS route,
              fqans, COUNT(*) AS n FROM jobs INDEXED BY jobs_active_counts
        WHERE state NOT IN (${sqlStates(FINAL_STATES)}) AND rest_state IN (${sqlStates(ACTIVE)})
        GROUP BY rest_state, queue, route, fqans`,
    );
    this.#read = db.prepare('SELECT data FROM site_series WHERE resolution = ? AND start = ?').pluck();
    this.#write = db.prepare(
      'INSERT INTO site_series (resolution, start, seq, data) VALUES (?, ?, ?, ?) ON CONFLICT (resolution, start) DO UPDATE SET seq = excluded.seq, data = excluded.data',
    );
    this.#prune = db.prepare(
      'DELETE FROM site_series WHERE resolution = ? AND start < (SELECT start FROM site_series WHERE resolution = ? ORDER BY start DESC LIMIT 1 OFFSET ?)',
    );
    this.#dropAfter = db.prepare('DELETE FROM site_series WHERE start > ?');
    this.#range = db.prepare(
      'SELECT start, data FROM site_series WHERE resolution = ? AND start >= ? AND start <= ? ORDER BY start',
    );
    this.#latestSeq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'job_events'").pluck();
    const last = db
      .prepare('SELECT start, seq FROM site_series WHERE resolution = ? ORDER BY start DESC LIMIT 1')
      .get(RESOLUTIONS[0]!.seconds) as { start: number; seq: number } | undefined;
    this.#newest = last?.start ?? 0;
    // A first start counts from now on (the history before it is not in buckets), and a
    // store restored from an older backup has fewer events than the series counted.
    const latest = (this.#latestSeq.get() as number | undefined) ?? 0;
    this.#seq = last === undefined || last.seq > latest ? latest : last.seq;
  }

  /** Ticks every `tickMs`, just after its boundaries (the timer never holds the process open). */
  start(): void {
    const arm = () => {
      const now = this.#now();
      const every = this.#tickMs;
      this.#timer = setTimeout(
        () => {
          this.tick();
          arm();
        },
        Math.floor(now / every) * every + every - now + Math.min(1000, every / 10),
      );
      this.#timer.unref();
    };
    arm();
  }

  /** Stops the timer and writes what the current bucket has so far. */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.tick();
  }

  /** Counts the changes since the last tick and a snapshot of the active jobs; writes their buckets. */
  tick(): void {
    const now = this.#now();
    const step = RESOLUTIONS[0]!.seconds;
    if (this.#newest > now + MAX_CLOCK_STEP_BACK_MS) {
      // The clock was set back far: the buckets after now were written under the wrong time.
      this.#dropAfter.run(now);
      this.#newest = 0;
    }
    const floor = this.#newest;
    const current = Math.max(bucketStart(now, step), floor);
    /** The 5-minute bucket of a change at `at`: its own, never before the newest written or after now. */
    const placed = (at: number) => Math.min(Math.max(bucketStart(at, step), floor), current);
    const deltas = new Map<number, BucketData>();
    const deltaAt = (start: number) => {
      let d = deltas.get(start);
      if (d === undefined) deltas.set(start, (d = emptyBucket()));
      return d;
    };
    let seq = this.#seq;
    for (;;) {
      const rows = this.#events.all(seq) as EventRow[];
      for (const r of rows) countEvent(deltaAt(placed(r.at)), r);
      if (rows.length > 0) seq = rows[rows.length - 1]!.seq;
      if (rows.length < EVENT_SLICE) break;
    }
    const snap = deltaAt(current);
    snap.samples += 1;
    for (const r of this.#snapshot.all() as {
      state: string;
      queue: string;
      route: string;
      fqans: string | null;
      n: number;
    }[]) {
      snap.states[r.state] = (snap.states[r.state] ?? 0) + r.n;
      const keys: Record<Dimension, string> = { queue: r.queue, vo: voOfFqans(r.fqans), route: r.route };
      for (const [d, k] of Object.entries(keys) as [Dimension, string][]) {
        if (d === 'route' && k === '') continue; // jobs stored without a route are not a route's
        const key = keyOf(k);
        snap.by[d][key] = (snap.by[d][key] ?? 0) + r.n;
      }
    }
    this.#db.transaction(() => {
      for (const res of RESOLUTIONS) {
        const into = new Map<number, BucketData>();
        for (const [start, d] of deltas) {
          const s = bucketStart(start, res.seconds);
          const had = into.get(s);
          into.set(s, had === undefined ? d : merged(had, d));
        }
        for (const [s, d] of into) {
          const old = this.#read.get(res.seconds, s) as string | undefined;
          const data = old === undefined ? merged(emptyBucket(), d) : merged(parseBucket(old), d);
          this.#write.run(res.seconds, s, seq, JSON.stringify(data));
        }
        this.#prune.run(res.seconds, res.seconds, res.keep - 1);
      }
    })();
    this.#seq = seq;
    this.#newest = current;
    this.#generation++;
  }

  /** Changes with every tick: what was read or drawn from the buckets before is stale after. */
  generation(): number {
    return this.#generation;
  }

  /** The buckets of `seconds` length starting within [from, to] (ms), oldest first. */
  points(seconds: number, from: number, to: number): SeriesPoint[] {
    return (this.#range.all(seconds, from, to) as { start: number; data: string }[]).map((r) => ({
      start: r.start,
      data: parseBucket(r.data),
    }));
  }
}

function countEvent(b: BucketData, r: EventRow): void {
  if (r.previous === STAGE_IN) b.stageIn++;
  if (r.previous === STAGE_OUT) b.stageOut++;
  // The job's record may be gone (cleaned before the tick): its change counts, its times are unknown.
  if (r.state === RUNNING && r.createdAt !== null && r.startedAt !== null)
    b.wait[binOf(Math.max(0, r.startedAt - r.createdAt) / 1000)]! += 1;
  if ((OUTCOME_REST_STATES as readonly string[]).includes(r.state)) {
    b.ended[r.state] = (b.ended[r.state] ?? 0) + 1;
    if (r.startedAt !== null && r.endedAt !== null) b.run[binOf(Math.max(0, r.endedAt - r.startedAt) / 1000)]! += 1;
  }
}
