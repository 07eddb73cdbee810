/**
 * Free space on the file systems the service fills: the session directories (client
 * uploads, staged inputs, job output) and the state directory (database, control
 * files). Looked at periodically with one statfs each (microseconds), never on the
 * request path; a request only reads the last verdict.
 *
 * Below a low-water mark, new work that would fill the disk is refused (submissions,
 * uploads: 507 CE_ERR_DISK_LOW_SPACE); jobs already running continue, so their output
 * still has the space the mark keeps in reserve.
 */
import { statfsSync } from 'node:fs';

export type LowWater = number | string;
export type DiskArea = 'sessions' | 'state';

export interface AreaStatus {
  readonly area: DiskArea;
  readonly path: string;
  readonly freeBytes: number;
  readonly totalBytes: number;
  /** The mark in bytes (0: off). */
  readonly lowWaterBytes: number;
  readonly low: boolean;
  /** Why the file system could not be looked at (counted as low). */
  readonly error?: string;
}

/** A mark in bytes: an integer as is, "N%" of the file system's size. */
export function lowWaterBytes(mark: LowWater, totalBytes: number): number {
  if (typeof mark === 'number') return mark;
  return Math.ceil((Number(mark.slice(0, -1)) / 100) * totalBytes);
}

export interface DiskWatchOptions {
  readonly paths: Readonly<Record<DiskArea, string>>;
  /** Read at every check: the marks may be reloaded (SIGHUP). */
  readonly marks: () => Readonly<Record<DiskArea, LowWater>>;
  readonly intervalMs: () => number;
  /** Told of each check's results (metrics) and of every change of verdict (log). */
  readonly onCheck?: (s: readonly AreaStatus[]) => void;
  readonly onChange?: (s: AreaStatus) => void;
}

export class DiskWatch {
  readonly #o: DiskWatchOptions;
  #status: AreaStatus[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(o: DiskWatchOptions) {
    this.#o = o;
    this.check();
  }

  /** Look now (also at start and after a reload). */
  check(): readonly AreaStatus[] {
    const marks = this.#o.marks();
    const before = new Map(this.#status.map((s) => [s.area, s.low]));
    this.#status = (Object.keys(this.#o.paths) as DiskArea[]).map((area) => {
      const path = this.#o.paths[area];
      try {
        const s = statfsSync(path);
        // bavail: what an unprivileged writer may still use (root's reserve excluded).
        const totalBytes = s.blocks * s.bsize;
        const freeBytes = s.bavail * s.bsize;
        const mark = lowWaterBytes(marks[area], totalBytes);
        return { area, path, freeBytes, totalBytes, lowWaterBytes: mark, low: mark > 0 && freeBytes < mark };
      } catch (e) {
        return {
          area,
          path,
          freeBytes: 0,
          totalBytes: 0,
          lowWaterBytes: 0,
          low: true,
          error: (e as NodeJS.ErrnoException).code ?? String(e),
        };
      }
    });
    this.#o.onCheck?.(this.#status);
    for (const s of this.#status)
      if (before.get(s.area) !== s.low && (before.has(s.area) || s.low)) this.#o.onChange?.(s);
    return this.#status;
  }

  start(): void {
    const tick = (): void => {
      this.check();
      this.#timer = setTimeout(tick, this.#o.intervalMs());
      this.#timer.unref();
    };
    this.#timer = setTimeout(tick, this.#o.intervalMs());
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The areas below their mark at the last check (empty: enough space). */
  low(): readonly AreaStatus[] {
    return this.#status.filter((s) => s.low);
  }

  get status(): readonly AreaStatus[] {
    return this.#status;
  }
}

/** The client-facing reason of a refusal: which file system, how much is left, the mark. */
export function lowSpaceReason(low: readonly AreaStatus[]): string {
  return low
    .map((s) =>
      s.error !== undefined
        ? `the ${s.area} file system cannot be examined (${s.error})`
        : `free space on the ${s.area} file system (${mib(s.freeBytes)}) is below its low-water mark (${mib(s.lowWaterBytes)})`,
    )
    .join('; ');
}

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;
