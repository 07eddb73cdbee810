/**
 * Log lines written in batches (docs/operations.md, "Monitor"; docs/performance.md,
 * "The access line, written in batches").
 *
 * Every request is one access line. Written one at a time through an asynchronous
 * destination, each line is a write request to the thread pool, a wake-up of a pool
 * thread, a `write` and a wake-up of the event loop to complete it: about 55 µs of server
 * CPU per request, a third of a small request's whole cost (docs/performance.md). Lines are
 * therefore collected here and handed on together, as a web server's buffered access log
 * does: when `maxBytes` have gathered, or `flushMs` after the first line of a batch,
 * whichever comes first; the logger flushes at once after a warning or an error.
 *
 * Nothing is dropped: a batch is handed to the destination whole, and the destination
 * queues while a write is in flight (it has no length limit). At process exit the batch
 * and the destination's queue are written synchronously. What a `kill -9` can lose is
 * the lines of the last `flushMs`.
 */

/** The destination the batches go to (pino's SonicBoom). */
export interface LineSink {
  write(data: string): boolean;
  flushSync(): void;
  reopen?(file?: string): void;
}

export class LineBatch {
  #parts: string[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sink: LineSink,
    private readonly maxBytes: number,
    private readonly flushMs: number,
  ) {}

  /** One log line (pino calls this with the serialized line, newline included). */
  write(line: string): boolean {
    this.#parts.push(line);
    // Code units, not bytes: a bound on the batch, which lines of ASCII meet exactly.
    this.#bytes += line.length;
    if (this.#bytes >= this.maxBytes) this.flush();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), this.flushMs);
      this.#timer.unref();
    }
    return true;
  }

  /**
   * Hands the lines gathered so far to the destination (asynchronously written). pino's
   * `logger.flush(cb)` calls this with its callback: it is called once they are handed on.
   */
  flush(cb?: () => void): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#parts.length > 0) {
      const text = this.#parts.length === 1 ? (this.#parts[0] as string) : this.#parts.join('');
      this.#parts = [];
      this.#bytes = 0;
      this.sink.write(text);
    }
    cb?.();
  }

  /** Writes the batch and everything queued before it, now (process exit). */
  flushSync(): void {
    this.flush();
    try {
      this.sink.flushSync();
    } catch {
      // A file destination not opened yet: nothing of it can be written synchronously.
    }
  }

  /** Log rotation: the lines gathered so far go to the file opened next. */
  reopen(file?: string): void {
    this.flush();
    this.sink.reopen?.(file);
  }

  /** Lines gathered and not yet handed on (tests). */
  get pending(): number {
    return this.#parts.length;
  }
}
