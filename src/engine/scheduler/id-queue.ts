/**
 * A FIFO of job ids: one array read from a moving head, compacted as it drains. No object
 * per entry, so a backlog of tens of thousands of jobs waiting for their turn (new jobs,
 * pokes, stage-outs) costs a pointer each.
 */
export class IdQueue {
  #items: string[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(id: string): void {
    this.#items.push(id);
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }

  shift(): string | undefined {
    if (this.#head === this.#items.length) return undefined;
    const id = this.#items[this.#head++];
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return id;
  }
}

export interface BoundedQueueOptions<V> {
  /** Most runs under way at once (1 or more). */
  readonly limit: number;
  /**
   * Starts the run of `id` with the value it waited with. `done` gives its turn back; it
   * must be called once the run ends (later calls do nothing). A `run` that throws gives
   * its turn back, and the error goes to the caller of `pump`.
   */
  readonly run: (id: string, value: V, done: () => void) => void;
  /** A turn was given back: start the next runs now (`pump`) or on a later turn of the event loop. */
  readonly freed: () => void;
}

/**
 * Jobs waiting for one of a bounded number of turns (the scheduler's first looks at new
 * jobs, pokes, due looks at parked jobs, stage-outs): without a bound, a flood of 100,000
 * jobs started that many chains at once, each holding its record (docs/performance.md,
 * "Memory"); here a waiting job is its id in an IdQueue and one map entry.
 *
 * Rules (test/engine/bounded-queue.test.ts):
 *  - No bound drops a job: a full queue makes it wait, never refuses it. Every id queued
 *    and not taken out (`drop`) runs exactly once, in the order queued.
 *  - An id queued while it waits already keeps its place (and takes the new value): it
 *    runs once, with the value last given.
 *  - `drop` takes an id out of its turn (a kill, a clean): its entry stays in the FIFO and
 *    is skipped when reached. If it is queued again before that, it goes again at the
 *    first of its entries reached; it still runs once per wait.
 *  - At most `limit` runs counted at once, besides those the caller starts out of turn
 *    with `enter` (an aborted run that ends at once must not wait behind the others).
 */
export class BoundedQueue<V = true> {
  readonly #o: BoundedQueueOptions<V>;
  readonly #order = new IdQueue();
  /** The ids waiting now, with their values; an id in #order but not here was dropped. */
  readonly #waiting = new Map<string, V>();
  #running = 0;
  #pumping = false;
  #closed = false;

  constructor(o: BoundedQueueOptions<V>) {
    if (!(o.limit >= 1)) throw new RangeError(`a bounded queue needs a limit of 1 or more, not ${o.limit}`);
    this.#o = o;
  }

  /** Queue `id` for its turn; false if it was waiting already (it keeps its place, with `value`). */
  push(id: string, value: V): boolean {
    const queued = !this.#waiting.has(id);
    if (queued) this.#order.push(id);
    this.#waiting.set(id, value);
    return queued;
  }

  /** Take `id` out of its turn: it will not run for this wait. Its value, or undefined if it was not waiting. */
  drop(id: string): V | undefined {
    const v = this.#waiting.get(id);
    this.#waiting.delete(id);
    return v;
  }

  has(id: string): boolean {
    return this.#waiting.has(id);
  }

  /** Ids waiting for their turn. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** Runs under way (counted, whether started in turn or by `enter`). */
  get running(): number {
    return this.#running;
  }

  /** A run may start at once without passing anyone: a turn is free and nothing is queued. */
  get idle(): boolean {
    return this.#running < this.#o.limit && this.#order.size === 0;
  }

  /** Count a run the caller starts itself (when `idle`, or out of turn); the function gives it back. */
  enter(): () => void {
    this.#running++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#running--;
      this.#o.freed();
    };
  }

  /** Start waiting runs, in order, while turns are free. */
  pump(): void {
    // A run that ends at once (done inside run) frees its turn within this loop: the
    // loop itself goes on, so `freed` calling pump again must not start a second loop.
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (!this.#closed && this.#running < this.#o.limit && this.#order.size > 0) {
        const id = this.#order.shift()!;
        if (!this.#waiting.has(id)) continue; // dropped: its turn is skipped
        const v = this.#waiting.get(id) as V;
        this.#waiting.delete(id);
        const done = this.enter();
        try {
          this.#o.run(id, v, done);
        } catch (e) {
          done(); // a run that never started holds no turn; the error is the caller's
          throw e;
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Forget every waiting id (service stop: the next start queues them again from the store). */
  clear(): void {
    this.#order.clear();
    this.#waiting.clear();
  }

  /** No run starts any more (service stop); ids may still be queued and counted. */
  close(): void {
    this.#closed = true;
  }
}
