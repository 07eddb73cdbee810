/**
 * The poll loop of a batch backend: one question to the batch system per interval for
 * all tracked jobs (squeue, qstat -xml), one pass at a time (a slow controller delays the
 * next pass instead of piling calls up); passes begin an interval apart, and the batch
 * system is asked at most half the time: a question that took longer than half the
 * interval is followed by as long a rest for it. A failed question is reported with its
 * streak and the next interval tries again; the batch system being unreachable never ends
 * a job by itself (the job's status file still does).
 */
export interface PollerHooks<T> {
  /** Asks the batch system about all jobs, once (the next interval is the retry). */
  ask(): Promise<T>;
  /** A successful answer; `startedAt` is when the question started (jobs registered later may be missing). */
  onAnswer(answer: T, startedAt: number): Promise<void>;
  /** The question failed: `streak` consecutive failures so far. */
  onFailure(error: Error, streak: number): Promise<void>;
  /** Whether any job needs watching (no question while idle). */
  busy(): boolean;
}

export class Poller<T> {
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #closed = false;
  #streak = 0;
  /** soon() came during a pass: the next pass follows it at once, not an interval later. */
  #again = false;

  constructor(
    private readonly intervalMs: number,
    private readonly hooks: PollerHooks<T>,
  ) {}

  /** Make sure a pass is scheduled (idempotent). */
  wake(): void {
    if (this.#closed || this.#timer !== undefined || this.#running) return;
    this.#timer = setTimeout(() => void this.#pass(), this.intervalMs);
  }

  /**
   * Run a pass soon (e.g. after a cancel), without waiting a whole interval. During a pass
   * (whose question may have been asked before what soon() is for), right after it: with
   * tens of thousands of jobs a pass takes a good part of the interval, and a cancel
   * confirmed only an interval after that missed the bound of two intervals.
   */
  soon(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#pass(), 10);
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #pass(): Promise<void> {
    this.#timer = undefined;
    if (this.#closed) return;
    if (!this.hooks.busy()) return;
    this.#running = true;
    const startedAt = Date.now();
    let askedMs = 0;
    try {
      const answer = await this.hooks.ask();
      askedMs = Date.now() - startedAt;
      this.#streak = 0;
      await this.hooks.onAnswer(answer, startedAt);
    } catch (e) {
      askedMs ||= Date.now() - startedAt;
      this.#streak++;
      await this.hooks.onFailure(e instanceof Error ? e : new Error(String(e)), this.#streak).catch(() => undefined);
    } finally {
      this.#running = false;
    }
    if (this.#again) {
      this.#again = false;
      this.soon();
    } else this.#next(Date.now() - startedAt, askedMs);
  }

  /**
   * The next pass an interval after this one began, not after it ended: with 20,000 jobs a
   * pass (qstat's 7 MB answer, read and parsed) took 0.5 s, so passes came every 1.5 s and a
   * change waited up to 3 s, over the bound of two intervals.
   *
   * The batch system is asked at most half the time: after a question that took `askedMs`
   * (the command and reading its answer), it rests at least as long before the next, so a
   * slow controller is never asked without a break. Only the question counts, not Ceres's
   * own work on the answer (the job table's pass, reading the status files of ended jobs),
   * during which the batch system already rests: counting the whole pass, a Grid Engine of 20,000 jobs
   * (qstat 0.46 s, Ceres 0.15 s) was asked every 1.2 s instead of every 1 s, and a change
   * missed the bound of two intervals.
   */
  #next(elapsedMs: number, askedMs: number): void {
    if (this.#closed || this.#timer !== undefined || this.#running || !this.hooks.busy()) return;
    const delay = Math.max(this.intervalMs - elapsedMs, 2 * askedMs - elapsedMs, 10);
    this.#timer = setTimeout(() => void this.#pass(), delay);
  }
}
