/**
 * Runs passes over /proc (./proc-scan.ts) on a worker thread: started on first use,
 * stopped after IDLE_MS without a pass (a thread is a V8 instance of its own, a few MiB
 * that an idle service need not hold). A pass that has not answered within
 * PASS_TIMEOUT_MS (a read of a process's environment can hang while that process holds
 * its memory-map lock) fails, and the thread is abandoned for a fresh one, so one stuck
 * process cannot stop every later sweep.
 */
import { Worker } from 'node:worker_threads';
import { ceError } from '../../errors/ce-error.js';
import type { ScanJob } from './proc-scan.js';
import type { ScanAnswer, ScanRequest } from './proc-scan-worker.js';

const WORKER_URL = new URL('./proc-scan-worker.js', import.meta.url);
const IDLE_MS = 10_000;
const PASS_TIMEOUT_MS = 30_000;
/**
 * A pass reads ~2 KB per process and keeps ~100 bytes of each. With V8's defaults the
 * thread's heap grew to a 32 MiB young generation and an old one to match: the process
 * held ~70 MiB more while sweeping continuously (4,000 passes over 460 processes), ~24 MiB
 * with these limits (the thread itself is ~10 MiB of that). A pass that needed more would
 * fail and be logged, not take the service down.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8, stackSizeMb: 1 };

interface Pending {
  readonly resolve: (killed: number) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export interface ProcScannerOptions {
  readonly idleMs?: number;
  readonly passTimeoutMs?: number;
  /** The thread's module (tests: one that never answers). */
  readonly workerUrl?: URL;
}

export class ProcScanner {
  #worker: Worker | undefined;
  #idle: NodeJS.Timeout | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #idleMs: number;
  readonly #timeoutMs: number;
  readonly #workerUrl: URL;
  /** Threads started (tests). */
  started = 0;

  constructor(o: ProcScannerOptions = {}) {
    this.#idleMs = o.idleMs ?? IDLE_MS;
    this.#timeoutMs = o.passTimeoutMs ?? PASS_TIMEOUT_MS;
    this.#workerUrl = o.workerUrl ?? WORKER_URL;
  }

  /** Whether a scanning thread is running now (tests). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** One pass: the number of processes killed. */
  scan(jobs: readonly ScanJob[], spare: ReadonlySet<number>): Promise<number> {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
    const w = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#fail(w, new Error(`process scan did not finish within ${this.#timeoutMs / 1000} s`));
      }, this.#timeoutMs);
      timer.unref();
      this.#pending.set(id, { resolve, reject, timer });
      const req: ScanRequest = {
        id,
        // Only what a pass reads: the records may carry more.
        jobs: jobs.map((j) => ({
          mark: j.mark,
          ...(j.wrapper ? { wrapper: { pid: j.wrapper.pid, startTicks: j.wrapper.startTicks } } : {}),
        })),
        spare: [...spare],
      };
      w.postMessage(req);
    });
  }

  async close(): Promise<void> {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = undefined;
    const w = this.#worker;
    if (w) this.#fail(w, ceError('CE_ERR_LRMS_CLOSED'));
    await w?.terminate();
  }

  #start(): Worker {
    const w = new Worker(this.#workerUrl, { resourceLimits: WORKER_LIMITS });
    this.started++;
    this.#worker = w;
    w.unref();
    w.on('message', (a: ScanAnswer) => {
      const p = this.#pending.get(a.id);
      if (!p) return;
      this.#pending.delete(a.id);
      clearTimeout(p.timer);
      if ('error' in a) p.reject(new Error(`process scan failed: ${a.error}`));
      else p.resolve(a.killed);
      this.#armIdle(w);
    });
    w.on('error', (e) => this.#fail(w, e));
    w.on('exit', (code) => this.#fail(w, new Error(`process scan thread exited (${code})`)));
    return w;
  }

  /** Stop an idle thread; the next pass starts a new one. */
  #armIdle(w: Worker): void {
    if (this.#pending.size > 0 || this.#worker !== w) return;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      this.#idle = undefined;
      if (this.#worker !== w || this.#pending.size > 0) return;
      this.#worker = undefined;
      void w.terminate();
    }, this.#idleMs);
    this.#idle.unref();
  }

  /** The thread is unusable: every pass sent to it fails, and it is let go. */
  #fail(w: Worker, e: Error): void {
    if (this.#worker !== w) return;
    this.#worker = undefined;
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.reject(e);
    }
    void w.terminate().catch(() => undefined);
  }
}
