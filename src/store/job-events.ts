/**
 * The durable job event sequence (migration 13): one row per change of a job's REST
 * state, numbered by an increasing `seq`. The rows are written by triggers on `jobs`, in
 * the statement that stores the transition, so no code path can change a state without
 * its event, and a crash keeps both or neither. This class only reads and prunes them.
 *
 * Sequence numbers are never reused (AUTOINCREMENT) and, since a rolled-back transaction
 * gives its numbers back, have no gaps but those retention made: every number up to
 * `prunedThrough()` is gone, every later one up to `latest()` is kept. A resume point
 * at or after `prunedThrough()` therefore misses nothing.
 */
import type { Db } from './database.js';
import { onEventsAdded } from './event-signal.js';
import { ENDED_REST_STATES } from '../vocabulary/job-states.js';

/** One change of a job's REST state, as the stream and `since=` answers show it. */
export interface JobEvent {
  readonly seq: number;
  readonly jobId: string;
  readonly owner: string;
  /** The job's VO (its first FQAN's, migration 17); null without one. Its monitors follow it. */
  readonly vo: string | null;
  readonly state: string;
  /** The REST state before; null for the job's first (its submission). */
  readonly previousState: string | null;
  /** When the change was stored (ms since the epoch). */
  readonly at: number;
  /** Set for ended states only (FINISHED, FAILED, KILLED, WIPED), where the job knows it. */
  readonly exitCode?: number;
  readonly failureReason?: string;
}

/** Bounds of what is kept: both apply; the older events go first. */
export interface EventRetention {
  /** Events older than this are pruned. */
  readonly maxAgeMs: number;
  /** At most this many events are kept. */
  readonly maxEvents: number;
}

type EventRow = [number, string, string, string, string | null, number, number | null, string | null, string | null];

const ENDED: ReadonlySet<string> = new Set(ENDED_REST_STATES);
const SELECT = 'SELECT seq, job_id, owner, state, previous_state, at, exit_code, failure_reason, vo FROM job_events';
/** Rows deleted per statement: a prune of millions never holds the event loop for long. */
const PRUNE_SLICE = 10_000;

export class JobEvents {
  readonly #ownerAfter;
  readonly #voAfter;
  readonly #allAfter;
  readonly #latest;
  readonly #oldest;
  readonly #pruneAge;
  readonly #pruneCount;
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    this.#ownerAfter = db.prepare(`${SELECT} WHERE owner = ? AND seq > ? ORDER BY seq LIMIT ?`).raw();
    this.#voAfter = db.prepare(`${SELECT} WHERE vo = ? AND seq > ? ORDER BY seq LIMIT ?`).raw();
    this.#allAfter = db.prepare(`${SELECT} WHERE seq > ? ORDER BY seq LIMIT ?`).raw();
    // The last number given out, kept even when its row was pruned.
    this.#latest = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'job_events'").pluck();
    this.#oldest = db.prepare('SELECT min(seq) FROM job_events').pluck();
    this.#pruneAge = db.prepare(
      'DELETE FROM job_events WHERE seq IN (SELECT seq FROM job_events WHERE at < ? ORDER BY seq LIMIT ?)',
    );
    this.#pruneCount = db.prepare(
      'DELETE FROM job_events WHERE seq IN (SELECT seq FROM job_events WHERE seq <= ? ORDER BY seq LIMIT ?)',
    );
  }

  /**
   * Calls `fn` after each write through this connection's job store that may have added
   * events (event-signal.ts); returns the unsubscribe.
   */
  onAdded(fn: () => void): () => void {
    return onEventsAdded(this.#db, fn);
  }

  /** The newest sequence number given out (0: none yet). */
  latest(): number {
    return (this.#latest.get() as number | undefined) ?? 0;
  }

  /** Every sequence number up to this one has been pruned (0: none). */
  prunedThrough(): number {
    const oldest = this.#oldest.get() as number | null;
    return oldest === null ? this.latest() : oldest - 1;
  }

  /** `owner`'s events after `seq`, oldest first, at most `limit`. */
  after(owner: string, seq: number, limit: number): JobEvent[] {
    return (this.#ownerAfter.all(owner, seq, limit) as EventRow[]).map(toEvent);
  }

  /** The events of the jobs of VO `vo` after `seq` (its monitors'), oldest first, at most `limit`. */
  afterInVo(vo: string, seq: number, limit: number): JobEvent[] {
    return (this.#voAfter.all(vo, seq, limit) as EventRow[]).map(toEvent);
  }

  /** Everyone's events after `seq` (the stream hub reads each new event once for all streams). */
  allAfter(seq: number, limit: number): JobEvent[] {
    return (this.#allAfter.all(seq, limit) as EventRow[]).map(toEvent);
  }

  /**
   * Deletes what retention no longer keeps, one slice per statement, at most `slices`
   * slices per call (the caller calls again later). Returns the count deleted.
   */
  prune(r: EventRetention, now = Date.now(), slices = 10): number {
    let n = 0;
    const countBound = this.latest() - r.maxEvents;
    for (let i = 0; i < slices; i++) {
      let c = this.#pruneAge.run(now - r.maxAgeMs, PRUNE_SLICE).changes;
      if (c < PRUNE_SLICE && countBound > 0) c += this.#pruneCount.run(countBound, PRUNE_SLICE - c).changes;
      n += c;
      if (c < PRUNE_SLICE) break;
    }
    return n;
  }
}

/**
 * A row as an event. One literal of one shape (no spreads, no per-row temporaries): a read
 * of a thousand rows makes a thousand small objects and nothing else.
 */
function toEvent(r: EventRow): JobEvent {
  const state = r[3];
  if (!ENDED.has(state) || (r[6] === null && r[7] === null))
    return { seq: r[0], jobId: r[1], owner: r[2], vo: r[8], state, previousState: r[4], at: r[5] };
  const e: { -readonly [K in keyof JobEvent]: JobEvent[K] } = {
    seq: r[0],
    jobId: r[1],
    owner: r[2],
    vo: r[8],
    state,
    previousState: r[4],
    at: r[5],
  };
  if (r[6] !== null) e.exitCode = r[6];
  if (r[7] !== null) e.failureReason = r[7];
  return e;
}
