/**
 * A counting semaphore with a FIFO queue whose occupancy can be observed, so the
 * engine can tell whether a job could start staging now and show how many wait.
 * Waiters leave the queue when their AbortSignal fires.
 */
export type Release = () => void;

interface Waiter {
  resolve: (r: Release) => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

export class Semaphore {
  private held = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('semaphore limit must be a positive integer');
  }

  get active(): number {
    return this.held;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** A slot is free and nobody is queued before us. */
  available(): boolean {
    return this.held < this.limit && this.waiters.length === 0;
  }

  tryAcquire(): Release | undefined {
    if (!this.available()) return undefined;
    this.held++;
    return this.releaser();
  }

  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const r = this.tryAcquire();
    if (r !== undefined) return Promise.resolve(r);
    return new Promise<Release>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = { resolve, reject, cleanup: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Run `fn` holding a slot. */
  async with<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private releaser(): Release {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      if (next !== undefined) {
        // The slot passes straight to the next waiter: `held` stays the same.
        next.cleanup();
        next.resolve(this.releaser());
      } else {
        this.held--;
      }
    };
  }
}
