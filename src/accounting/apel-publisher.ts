/**
 * Sends the accounting messages (apel-outbox.ts) to APEL, one at a time and in order:
 * every interval it queues what was recorded since, then sends each stored message and
 * marks it sent once the messaging service acknowledged it. A failed send (timeout,
 * refused connection, 5xx, 401, ...) leaves the message unsent and is retried after a
 * wait that doubles with each further failure up to a bound; nothing is dropped. Every
 * send is logged with its counts and reported to `onSent`/`onFailed` (metrics).
 * While one message is published the next one is signed: signing is a process of its
 * own, and only the publishing has to wait for the acknowledgement before it.
 */
import type { ApelOutbox, OutboxMessage } from './apel-outbox.js';

export interface PublisherLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ApelPublisherDeps {
  readonly outbox: ApelOutbox;
  /** Signs a message (S/MIME): what is published. */
  readonly sign: (m: OutboxMessage) => Promise<string>;
  /** Publishes one signed message; resolves with the id the messaging service gave it. */
  readonly publish: (m: OutboxMessage, signed: string) => Promise<string>;
  readonly log: PublisherLog;
  readonly intervalMs: number;
  readonly retryMinMs: number;
  readonly retryMaxMs: number;
  readonly onSent?: (m: OutboxMessage, seconds: number) => void;
  readonly onFailed?: (m: OutboxMessage, error: Error) => void;
}

/** The wait after the n-th failure in a row (n ≥ 1): doubling from the least, at most the most. */
export function retryDelay(failures: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(failures - 1, 30));
}

export class ApelPublisher {
  readonly #d: ApelPublisherDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();
  #failures = 0;
  #stopped = false;
  /** The next message, being signed while the one before it is published. */
  #ahead: { id: number; signed: Promise<string> } | undefined;

  constructor(d: ApelPublisherDeps) {
    this.#d = d;
  }

  start(): void {
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.runOnce()
        .catch((e: unknown) => {
          // The store failed (disk full, ...): nothing was marked; tried again like a failed send.
          this.#failures++;
          this.#d.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'accounting for APEL not queued');
          return false;
        })
        .then((ok) =>
          this.#schedule(ok ? this.#d.intervalMs : retryDelay(this.#failures, this.#d.retryMinMs, this.#d.retryMaxMs)),
        );
    }, ms);
    // Sending never keeps the process alive on its own.
    this.#timer.unref();
  }

  /** Queues and sends until nothing is left (true) or a send failed (false). */
  async runOnce(): Promise<boolean> {
    const { outbox, log } = this.#d;
    let sent = 0;
    let records = 0;
    while (!this.#stopped) {
      const m = outbox.next();
      if (m === undefined) {
        if (outbox.queueNext().messages > 0) continue;
        if (sent > 0) log.info({ messages: sent, records }, 'accounting sent to APEL: nothing left to send');
        return true;
      }
      const t0 = process.hrtime.bigint();
      try {
        const signed = this.#ahead?.id === m.id ? this.#ahead.signed : this.#d.sign(m);
        this.#ahead = undefined;
        const published = signed.then((text) => this.#d.publish(m, text));
        this.#signAhead(m.id);
        const id = await published;
        outbox.markSent(m.id, id);
        const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
        this.#failures = 0;
        sent++;
        records += m.records;
        log.info(
          { message: m.id, kind: m.kind, records: m.records, amsId: id, ms: Math.round(seconds * 1000) },
          'accounting message sent to APEL',
        );
        this.#d.onSent?.(m, seconds);
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        outbox.noteFailure(m.id, err.message);
        this.#failures++;
        const retryMs = retryDelay(this.#failures, this.#d.retryMinMs, this.#d.retryMaxMs);
        log.warn(
          { message: m.id, kind: m.kind, records: m.records, attempts: m.attempts + 1, retryMs, err: err.message },
          'accounting message not sent to APEL; retried later',
        );
        this.#d.onFailed?.(m, err);
        return false;
      }
    }
    return true;
  }

  #signAhead(after: number): void {
    const { outbox } = this.#d;
    // At the end of what is queued, the next slice is queued now (durably, as always).
    const n = outbox.nextAfter(after) ?? (outbox.queueNext().messages > 0 ? outbox.nextAfter(after) : undefined);
    if (n === undefined) return;
    const signed = this.#d.sign(n);
    // Not awaited if the message before fails: its failure is met again when it is signed anew.
    signed.catch(() => undefined);
    this.#ahead = { id: n.id, signed };
  }

  /**
   * Stops sending. A send in flight is waited for a little only: left unacknowledged, its
   * message is sent again at the next start (the one repeat a stop may cause).
   */
  async stop(waitMs = 2000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    let t: NodeJS.Timeout | undefined;
    await Promise.race([this.#running, new Promise((r) => (t = setTimeout(r, waitMs)))]);
    clearTimeout(t);
  }
}
