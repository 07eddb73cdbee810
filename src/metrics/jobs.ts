/**
 * Job metrics. Counts per state and queue are computed from the store when scraped
 * (one GROUP BY), so they cannot drift from the truth the way counters kept beside it
 * would; transitions and time in state are observed by the scheduler as they happen.
 */
import type { Metrics } from './instruments.js';

export interface StateCounts {
  countByState(): readonly { state: string; pending: number; queue: string; n: number }[];
}

/** What the scheduler reports of one job state change (engine/scheduler onTransition). */
export interface TransitionSeen {
  readonly id: string;
  readonly createdAt: number;
  readonly from: string;
  readonly to: string;
  readonly final: boolean;
}

export function registerJobGauges(m: Metrics, store: StateCounts): void {
  m.gaugeAtScrape(
    'ceres_jobs',
    'Jobs in the store, by state (PENDING: prefix for held jobs) and queue',
    ['state', 'queue'],
    (set) => {
      const sums = new Map<string, { state: string; queue: string; n: number }>();
      for (const r of store.countByState()) {
        const state = r.pending ? `PENDING:${r.state}` : r.state;
        const key = `${state}\0${r.queue}`;
        const e = sums.get(key);
        if (e) e.n += r.n;
        else sums.set(key, { state, queue: r.queue, n: r.n });
      }
      for (const e of sums.values()) set({ state: e.state, queue: e.queue }, e.n);
    },
  );
}

/**
 * Observes transitions: counts them and, when a job leaves a state it was seen
 * entering (or ACCEPTED, entered at submission), how long it stayed. Jobs resumed
 * after a restart are timed from their next state on. One entry per unfinished job.
 */
export class TransitionObserver {
  readonly #m: Metrics;
  readonly #now: () => number;
  /**
   * Per unfinished job one number: (tenths of a second since #epoch) × STATE_CODES + the
   * state's code. An object per job ({ state, at }) cost ~60 bytes more for every job in
   * progress, and so does a number past the V8 small-integer range (2^31), which is boxed:
   * in milliseconds that was every entry made after the service's first 67 s. In tenths
   * it stays a small integer for 155 days of uptime (it stays correct after, only larger).
   * The histogram's smallest bucket is 1 s, so a tenth is fine enough.
   */
  readonly #entered = new Map<string, number>();
  readonly #epoch: number;
  /** State names by code (a handful: the positions of the state machine). */
  readonly #states: string[] = [];

  constructor(m: Metrics, now: () => number = Date.now) {
    this.#m = m;
    this.#now = now;
    this.#epoch = now();
  }

  seen(t: TransitionSeen): void {
    const now = this.#now();
    this.#m.transitions.inc({ from: t.from, to: t.to });
    const e = this.#entered.get(t.id);
    const since =
      e !== undefined && this.#states[e % STATE_CODES] === t.from
        ? this.#epoch + Math.floor(e / STATE_CODES) * TIME_UNIT_MS
        : t.from === 'ACCEPTED'
          ? t.createdAt
          : undefined;
    if (since !== undefined) this.#m.stateSeconds.observe({ state: t.from }, Math.max(0, now - since) / 1000);
    if (t.final) this.#entered.delete(t.id);
    else
      this.#entered.set(
        t.id,
        Math.floor(Math.max(0, now - this.#epoch) / TIME_UNIT_MS) * STATE_CODES + this.#code(t.to),
      );
  }

  #code(state: string): number {
    let c = this.#states.indexOf(state);
    if (c < 0) {
      if (this.#states.length === STATE_CODES - 1) return STATE_CODES - 1; // never matches: not timed
      c = this.#states.push(state) - 1;
    }
    return c;
  }

  /** Jobs being timed (tests; bounded by the unfinished jobs). */
  get tracked(): number {
    return this.#entered.size;
  }
}

/** Room for the state codes of TransitionObserver (the state machine has 11 positions). */
const STATE_CODES = 16;
/** The resolution of the entry times TransitionObserver keeps. */
const TIME_UNIT_MS = 100;
