/**
 * The stored jobs counted per (state, held, queue) and per (route, REST state), kept in memory
 * beside the table for the metrics gauges (`ceres_jobs`, `ceres_route_jobs`): a scrape reads two
 * small maps instead of grouping every stored job, which took about 100 ms of the event loop at
 * 100,000 stored jobs (docs/performance.md, "Metrics scrape").
 *
 * Invariant, as the job index's (job-index.ts): once loaded, the counts equal the GROUP BY over
 * `jobs` after every committed write. JobStore is the only writer of the table; it loads the
 * counts from the table at the first read (not at open: a start with many stored jobs does not
 * wait for a count nobody asked for), and from then on applies each committed write: an insert
 * adds its jobs, a delete removes one, an update that changes the state, the held flag or the
 * REST state moves one job from its old key to its new one. A job's queue and route are written
 * at insert only. A key whose count falls to 0 is removed, as the GROUP BY would not list it.
 */

/** What the tally reads of one job (or, at load, of one group of the table). */
export interface TallyRow {
  readonly state: string;
  readonly pending: boolean;
  readonly queue: string;
  /** The route's name; null: the job took none. */
  readonly route: string | null;
  readonly restState: string;
}

export interface StateTallyEntry {
  readonly state: string;
  /** 1: held (the gauge's `PENDING:` prefix). */
  readonly pending: number;
  readonly queue: string;
  n: number;
}

export interface RouteTallyEntry {
  readonly route: string;
  /** The REST state. */
  readonly state: string;
  n: number;
}

export class StateTally {
  readonly #states = new Map<string, StateTallyEntry>();
  readonly #routes = new Map<string, RouteTallyEntry>();

  /** From the table's groups (`n` jobs each), once. */
  constructor(groups: Iterable<TallyRow & { readonly n: number }>) {
    for (const g of groups) this.add(g, g.n);
  }

  /** Count `delta` jobs (negative: remove) of `r`'s keys. */
  add(r: TallyRow, delta: number): void {
    const pending = r.pending ? 1 : 0;
    bump(this.#states, `${r.state}\0${pending}\0${r.queue}`, delta, () => ({
      state: r.state,
      pending,
      queue: r.queue,
      n: 0,
    }));
    if (r.route !== null)
      bump(this.#routes, `${r.route}\0${r.restState}`, delta, () => ({ route: r.route!, state: r.restState, n: 0 }));
  }

  /** One job moved from `from`'s keys to `to`'s (an update). */
  move(from: TallyRow, to: TallyRow): void {
    this.add(from, -1);
    this.add(to, 1);
  }

  /** Copies: the entries change with later writes. */
  byState(): readonly StateTallyEntry[] {
    return [...this.#states.values()].map((e) => ({ ...e }));
  }

  byRoute(): readonly RouteTallyEntry[] {
    return [...this.#routes.values()].map((e) => ({ ...e }));
  }
}

function bump<E extends { n: number }>(m: Map<string, E>, key: string, delta: number, make: () => E): void {
  const e = m.get(key) ?? make();
  e.n += delta;
  if (e.n > 0) m.set(key, e);
  else m.delete(key);
}
