/**
 * When finished jobs' session lifetimes (and wiped records' retention) end. A job whose
 * end is within a day gets a timer of its own, so it is wiped or purged on time; the rest
 * are found by the periodic sweep. Both only call `sweep`, which reads what has expired
 * from the store: the store, not these timers, is the truth (a restart loses no expiry).
 */
export interface ExpiryOptions {
  readonly now: () => number;
  /** Wipe or purge what has expired now (the scheduler's sweep). */
  readonly sweep: () => void;
}

/** Beyond this a job gets no timer of its own: the periodic sweep finds it. */
const OWN_TIMER_WITHIN_MS = 24 * 3600 * 1000;

export class Expiry {
  readonly #o: ExpiryOptions;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #sweep: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(o: ExpiryOptions) {
    this.#o = o;
  }

  /** Sweep now, then every `intervalMs`. */
  start(intervalMs: number): void {
    this.#o.sweep();
    this.#sweep = setInterval(() => this.#o.sweep(), intervalMs);
    this.#sweep.unref();
  }

  /** Wake up exactly when a job's session lifetime (or wiped-record retention) ends; null: it has none now. */
  schedule(id: string, at: number | null): void {
    this.forget(id);
    if (at === null || this.#stopped) return;
    const delay = at - this.#o.now();
    if (delay > OWN_TIMER_WITHIN_MS) return;
    const t = setTimeout(
      () => {
        this.#timers.delete(id);
        this.#o.sweep();
      },
      // A few ms late, so the sweep's `now` is past the end.
      Math.max(0, delay) + 5,
    );
    t.unref();
    this.#timers.set(id, t);
  }

  /** The job is gone: its timer goes. */
  forget(id: string): void {
    const t = this.#timers.get(id);
    if (t) clearTimeout(t);
    this.#timers.delete(id);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#sweep) clearInterval(this.#sweep);
    for (const t of this.#timers.values()) clearTimeout(t);
  }
}
