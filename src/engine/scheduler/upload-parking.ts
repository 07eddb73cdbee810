/**
 * Jobs in PREPARING waiting for client uploads between two looks at them (the staging
 * port's `lookOnce`): when they entered PREPARING and when to look again. A wait used to
 * be a suspended stage-in (the record, a chain of async calls, an abort controller, a
 * timer, upload listeners): ~10 KiB per job, 20,000 parked jobs held ~150 MiB
 * (docs/performance.md, "Memory"). Now a job is looked at again when poked (an upload
 * completed) or by the one shared timer, and aborting a parked wait (kill) runs the look
 * with an aborted signal, so it reports exactly as an aborted wait did.
 *
 * Parked jobs whose next look is due wait in a bounded queue: at most `limit` looks run at
 * once, each holding its turn until the look ends. After a restart with 100,000 parked
 * jobs, or a fill whose jobs all came due in the same second, the timer used to start
 * every due look at once, each holding its record while it waited for the disk
 * (docs/performance.md, "A store fill's catch-up").
 *
 * Invariant: a job is in the due queue exactly while its entry here says `queued`; every
 * way an entry leaves (`take`, `clear`) takes it out of the queue too.
 */
import { BoundedQueue } from './id-queue.js';

/** A job waiting for client uploads between two looks; epoch ms. */
export interface Parked {
  readonly since: number;
  readonly at: number;
  /** Due, and waiting in the due queue (or for its chain) for its look. */
  queued: boolean;
}

export interface UploadParkingOptions {
  /** Due looks running at once. */
  readonly limit: number;
  /** Parked jobs are due at times spread over the poll interval: one scan of them per `scanMs` at most. */
  readonly scanMs: number;
  /** Starts the due look of `id` (in the job's turn); `done` once it has ended. */
  readonly look: (id: string, done: () => void) => void;
  /** A look's turn was given back: start the next ones (the scheduler's pump). */
  readonly freed: () => void;
}

export class UploadParking {
  readonly #o: UploadParkingOptions;
  readonly #parked = new Map<string, Parked>();
  readonly #due: BoundedQueue;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;
  #stopped = false;

  constructor(o: UploadParkingOptions) {
    this.#o = o;
    this.#due = new BoundedQueue({ limit: o.limit, run: (id, _v, done) => o.look(id, done), freed: o.freed });
  }

  /** Jobs held here (none of them with a look under way, besides due ones whose look has not yet taken them). */
  get size(): number {
    return this.#parked.size;
  }

  has(id: string): boolean {
    return this.#parked.has(id);
  }

  /** Whether the job is still due for the look it was queued for (not looked at or removed meanwhile). */
  isDue(id: string): boolean {
    return this.#parked.get(id)?.queued === true;
  }

  /** A job found in PREPARING at start: due now, in turn with the others (as ids, not 100,000 stage-ins at once). */
  due(id: string, since: number): void {
    this.#parked.set(id, { since, at: 0, queued: true });
    this.#due.push(id, true);
  }

  /** A look found uploads still missing: hold the job as numbers until `at` (or a poke). */
  park(id: string, since: number, at: number): void {
    this.#take(id);
    if (this.#stopped) return;
    this.#parked.set(id, { since, at, queued: false });
    this.#arm(at);
  }

  /** The job leaves the parking (looked at now, cancelled, cleaned): its entry, if it was parked. */
  take(id: string): Readonly<Parked> | undefined {
    return this.#take(id);
  }

  #take(id: string): Parked | undefined {
    const p = this.#parked.get(id);
    if (p === undefined) return undefined;
    this.#parked.delete(id);
    if (p.queued) this.#due.drop(id);
    return p;
  }

  /** Start due looks while turns are free. */
  pump(): void {
    this.#due.pump();
  }

  /** Service stop: parked jobs hold nothing to stop; the next start finds them in PREPARING again. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#parked.clear();
    this.#due.clear();
    this.#due.close();
  }

  #arm(at: number): void {
    if (this.#stopped || at >= this.#timerAt) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAt = at;
    // Epoch ms from the stager's clock; a far time is reached in steps (timers take < 2^31 ms).
    this.#timer = setTimeout(() => this.#scan(), Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1));
    this.#timer.unref();
  }

  /** Queue the parked jobs that are due for their look; at most one scan of them all per `scanMs`. */
  #scan(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [id, p] of this.#parked) {
      if (p.queued) continue;
      if (p.at <= now) {
        p.queued = true;
        this.#due.push(id, true);
      } else if (p.at < next) next = p.at;
    }
    if (next < Infinity) this.#arm(Math.max(next, now + this.#o.scanMs));
    this.#due.pump();
  }
}
