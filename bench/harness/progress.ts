/**
 * One progress line on stderr while a long scenario runs. On a terminal it is
 * rewritten in place (\r, at most 5 times a second); into a file or pipe a line is
 * written at most every 15 s so logs show the run is alive without filling up.
 */

export interface ProgressSink {
  write(s: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

export class Progress {
  #last = 0;
  #shown = '';
  readonly #tty: boolean;

  constructor(
    readonly out: ProgressSink = process.stderr,
    readonly now: () => number = Date.now,
  ) {
    this.#tty = out.isTTY === true;
  }

  /** Shows `text` (e.g. "bulk-submit: 3/5 POSTs, 812 jobs/s"); `force` bypasses the rate limit. */
  update(text: string, force = false): void {
    const t = this.now();
    const minGap = this.#tty ? 200 : 15_000;
    if (!force && t - this.#last < minGap) return;
    this.#last = t;
    if (this.#tty) {
      const width = Math.max(20, (this.out.columns ?? 100) - 1);
      const line = text.length > width ? `${text.slice(0, width - 1)}…` : text;
      this.out.write(`\r${line}${' '.repeat(Math.max(0, this.#shown.length - line.length))}`);
      this.#shown = line;
    } else {
      this.out.write(`${text}\n`);
    }
  }

  /** Clears the line; prints `final` (if given) as a normal line. */
  done(final?: string): void {
    if (this.#tty && this.#shown !== '') this.out.write(`\r${' '.repeat(this.#shown.length)}\r`);
    this.#shown = '';
    this.#last = 0;
    if (final !== undefined) this.out.write(`${final}\n`);
  }

  /** A normal message line that does not collide with the progress line. */
  log(text: string): void {
    const shown = this.#shown;
    if (this.#tty && shown !== '') this.out.write(`\r${' '.repeat(shown.length)}\r`);
    this.out.write(`${text}\n`);
    if (this.#tty && shown !== '') {
      this.out.write(shown);
    }
  }
}
