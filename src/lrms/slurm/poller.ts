/**
 * The poll loop: one squeue call per interval for all tracked jobs, one pass at a time
 * (a slow controller delays the next pass instead of piling calls up). A failed call is
 * logged (once per streak, then every tenth) and the next interval tries again; Slurm
 * being unreachable never ends a job by itself (the job's status file still does).
 */
import { SQUEUE_ARGS, parseSqueue, type ParsedQueue } from './squeue.js';
import type { SlurmRunner } from './run-command.js';

export interface PollerHooks {
  /** A successful squeue answer; `startedAt` is when the call started (jobs registered later may be missing). */
  onQueue(queue: ParsedQueue, startedAt: number): Promise<void>;
  /** squeue failed: `streak` consecutive failures so far. */
  onFailure(error: Error, streak: number): Promise<void>;
  /** Whether any job needs watching (no squeue call while idle). */
  busy(): boolean;
}

export class Poller {
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #closed = false;
  #streak = 0;

  constructor(
    private readonly runner: SlurmRunner,
    private readonly intervalMs: number,
    private readonly hooks: PollerHooks,
  ) {}

  /** Make sure a pass is scheduled (idempotent). */
  wake(): void {
    if (this.#closed || this.#timer !== undefined || this.#running) return;
    this.#timer = setTimeout(() => void this.#pass(), this.intervalMs);
  }

  /** Run a pass soon (e.g. after a cancel), without waiting a whole interval. */
  soon(): void {
    if (this.#closed || this.#running) return;
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
    try {
      // One attempt: the next interval is the retry.
      const { stdout } = await this.runner.run('squeue', SQUEUE_ARGS, { attempts: 1 });
      this.#streak = 0;
      await this.hooks.onQueue(parseSqueue(stdout), startedAt);
    } catch (e) {
      this.#streak++;
      await this.hooks.onFailure(e instanceof Error ? e : new Error(String(e)), this.#streak).catch(() => undefined);
    } finally {
      this.#running = false;
    }
    this.wake();
  }
}
