/**
 * Group commit for submissions. Each acknowledged submission must be on disk before
 * its 201 (synchronous=FULL), and on this kind of disk the fsync of a commit costs
 * more than everything else a small submission does. Submissions that arrive while a
 * commit is pending (16 clients each sending one job) are therefore stored together:
 * the first request of an event-loop turn schedules one transaction for everything
 * queued by the time it runs, and every request waits for that transaction.
 *
 * Isolation: if the shared transaction fails (nothing is stored then: it is one
 * transaction), each request's jobs are retried in a transaction of their own, so one
 * request's failure is never another's.
 */
import type { NewJob } from './job-store.js';

export interface BatchSink {
  /** Store all these jobs in one durable transaction, or none of them. */
  insertMany(jobs: readonly NewJob[]): void;
}

interface Waiter {
  readonly jobs: readonly NewJob[];
  resolve(): void;
  reject(e: unknown): void;
}

export class GroupCommit {
  readonly #sink: BatchSink;
  #queue: Waiter[] = [];
  #scheduled = false;

  constructor(sink: BatchSink) {
    this.#sink = sink;
  }

  /** Resolves once `jobs` are durably stored; rejects with the error of their own commit. */
  insert(jobs: readonly NewJob[]): Promise<void> {
    if (jobs.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ jobs, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate, not a microtask: requests whose bodies complete in the same
        // I/O phase join this commit.
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    this.#scheduled = false;
    if (batch.length === 1) return this.#one(batch[0] as Waiter);
    try {
      this.#sink.insertMany(batch.flatMap((w) => w.jobs));
    } catch {
      for (const w of batch) this.#one(w);
      return;
    }
    for (const w of batch) w.resolve();
  }

  #one(w: Waiter): void {
    try {
      this.#sink.insertMany(w.jobs);
    } catch (e) {
      w.reject(e);
      return;
    }
    w.resolve();
  }
}
