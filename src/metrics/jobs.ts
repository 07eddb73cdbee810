/**
 * Job metrics. Counts per state and queue are read at each scrape from the store's tally
 * (src/store/state-tally.ts): counts the store keeps beside the table as it writes it, so a
 * scrape costs a few map entries at any number of stored jobs (a GROUP BY over every stored
 * job took about 100 ms of the event loop at 100,000); transitions and time in state are
 * observed by the scheduler as they happen.
 */
import type { Metrics } from './instruments.js';

export interface StateCounts {
  tally(): {
    byState(): readonly { state: string; pending: number; queue: string; n: number }[];
    /** Routed jobs per route and REST state (docs/routes.md). */
    byRoute(): readonly { route: string; state: string; n: number }[];
  };
}

/** What the scheduler reports of one job state change (engine/scheduler onTransition). */
export interface TransitionSeen {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly final: boolean;
  /** When the job entered `from` (the record's stored entry time); undefined: not known. */
  readonly enteredAt: number | undefined;
}

export function registerJobGauges(m: Metrics, store: StateCounts): void {
  m.gaugeAtScrape(
    'ceres_jobs',
    'Jobs in the store, by state (PENDING: prefix for held jobs) and queue',
    ['state', 'queue'],
    (set) => {
      const sums = new Map<string, { state: string; queue: string; n: number }>();
      for (const r of store.tally().byState()) {
        const state = r.pending ? `PENDING:${r.state}` : r.state;
        const key = `${state}\0${r.queue}`;
        const e = sums.get(key);
        if (e) e.n += r.n;
        else sums.set(key, { state, queue: r.queue, n: r.n });
      }
      for (const e of sums.values()) set({ state: e.state, queue: e.queue }, e.n);
    },
  );
  // Per route (docs/routes.md): the REST states, as clients and the route's users see them.
  m.gaugeAtScrape(
    'ceres_route_jobs',
    'Routed jobs in the store, by route and REST state',
    ['route', 'state'],
    (set) => {
      for (const r of store.tally().byRoute()) set({ route: r.route, state: r.state }, r.n);
    },
  );
}

/**
 * Observes transitions: counts them and, when the time the job entered the state it
 * leaves is known, how long it stayed. That time comes with the transition, from the
 * job's record (its `stateEnteredAt`, or its submission for a job leaving ACCEPTED), so
 * nothing is kept here per job: an entry per job in progress was ~37 bytes each, 3.5 MiB
 * at 100,000 waiting jobs, and was lost with a restart (docs/performance.md, "Memory").
 */
export class TransitionObserver {
  readonly #m: Metrics;
  readonly #now: () => number;

  constructor(m: Metrics, now: () => number = Date.now) {
    this.#m = m;
    this.#now = now;
  }

  seen(t: TransitionSeen): void {
    this.#m.transitions.inc({ from: t.from, to: t.to });
    if (t.enteredAt !== undefined)
      this.#m.stateSeconds.observe({ state: t.from }, Math.max(0, this.#now() - t.enteredAt) / 1000);
  }
}
