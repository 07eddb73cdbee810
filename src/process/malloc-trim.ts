/**
 * Giving the C library's free memory back to the system (docs/operations.md, "Memory").
 *
 * glibc's malloc returns only the top of an arena when memory is freed; what is freed
 * in the middle stays resident. Under constant load (the soak: TLS connections opened
 * and cut, request and upload buffers, SQLite pages) the freed memory accumulated: the
 * main arena held 42 MiB free of 71 MiB and the service's RSS climbed ~0.15 MiB/s for
 * as long as the load lasted, while the live data did not grow. `malloc_trim(0)`
 * releases the free pages of every arena (they stay mapped, so reusing them costs a
 * page fault, not a system call).
 *
 * The trim runs when the resident memory outside V8's heap has grown (looked at every
 * 10 s), not only when the service is quiet, because the climb happens under load; and
 * after each full collection of the heap policy (./heap-policy.ts), which frees a burst's
 * buffers. V8's own pages are left out of the measure: under load they swing by 20 MiB
 * with the collection cycle, and a floor taken at a high point of that swing hid the
 * malloc arena's growth (28 MiB free and resident in `[heap]`, untouched, after a soak:
 * docs/performance.md, "With the jobs stored held level").
 *
 * The helper is a Node-API module compiled once with the system compiler into
 * `<state>/native/` (./malloc-c.ts). Without a compiler, on another C library, or when
 * it cannot be loaded, the service runs as before (`onUnavailable` says why).
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { getHeapStatistics } from 'node:v8';
import { compiledPath, compileOnce } from '../lrms/core/wrapper-build.js';
import { MALLOC_C_SOURCE } from './malloc-c.js';

export interface NativeMemory {
  /** malloc_trim(0) now, on this thread: whether any memory was given back. */
  trim(): boolean;
  /** malloc_trim(0) on a thread of its own; false while the previous one still runs. */
  trimAsync(): boolean;
  /** Milliseconds the last trim on its own thread took; -1 while one runs, -2 before the first. */
  lastTrim(): number;
  /** Bytes free but held in malloc's main arena (mallinfo2 fordblks). */
  held(): number;
}

/** How the helper is built: a loadable module, readable by the service alone. */
const BUILD = { flags: ['-shared', '-fPIC', '-pthread'], mode: 0o600, suffix: '.node' } as const;

/** The helper's file: its name carries a hash of its source, so a new version is compiled anew. */
export function nativeMemoryFile(dir: string): string {
  return compiledPath(dir, 'malloc', MALLOC_C_SOURCE, BUILD.suffix);
}

function load(path: string): NativeMemory {
  // process.dlopen through require: the documented way to load a Node-API module.
  const m = createRequire(import.meta.url)(path) as Partial<NativeMemory>;
  if (
    typeof m.trim !== 'function' ||
    typeof m.held !== 'function' ||
    typeof m.trimAsync !== 'function' ||
    typeof m.lastTrim !== 'function'
  )
    throw new Error(`${path} is not the native memory helper`);
  return { trim: m.trim, held: m.held, trimAsync: m.trimAsync, lastTrim: m.lastTrim };
}

/**
 * The native memory helper, compiled into `dir` on first use. Undefined (and
 * `onUnavailable` with the reason) where it cannot be had: not Linux, no compiler, a C
 * library without malloc_trim/mallinfo2, or a load failure.
 */
export async function loadNativeMemory(
  dir: string,
  compiler: string,
  onUnavailable?: (why: string) => void,
): Promise<NativeMemory | undefined> {
  if (process.platform !== 'linux') {
    onUnavailable?.(`not on Linux (${process.platform})`);
    return undefined;
  }
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = nativeMemoryFile(dir);
    try {
      return load(await compileOnce(dir, 'malloc', MALLOC_C_SOURCE, compiler, BUILD));
    } catch (e) {
      // A file there that does not load (a damaged one): made again, once.
      if (!existsSync(path)) throw e;
      await rm(path, { force: true });
      return load(await compileOnce(dir, 'malloc', MALLOC_C_SOURCE, compiler, BUILD));
    }
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    onUnavailable?.(msg.split('\n')[0] ?? msg);
    return undefined;
  }
}

export interface TrimPolicyOptions {
  readonly native: NativeMemory;
  /** How often the resident set is looked at (default 10 s). */
  readonly intervalMs?: number;
  /** Trim when the resident memory outside V8's heap has grown this much since the last trim (default 8 MiB). */
  readonly minGrowthBytes?: number;
  /** The resident set now (default: process.memoryUsage.rss). */
  readonly rssBytes?: () => number;
  /** The part of it that is V8's heap (default: its physical size, v8.getHeapStatistics). */
  readonly heapBytes?: () => number;
  /** Before and after: the resident memory outside V8's heap. */
  readonly onTrimmed?: (r: {
    readonly beforeBytes: number;
    readonly afterBytes: number;
    readonly heldBytes: number;
    readonly ms: number;
  }) => void;
}

export interface TrimPolicy {
  /** One look (the timer calls it; tests call it directly). Returns whether it started a trim. */
  tick(): boolean;
  /** Start a trim now (after a full collection has freed a burst's buffers). */
  trim(): void;
  stop(): void;
}

/** How often a running trim is looked at, to report it and set the new floor. */
const DONE_POLL_MS = 50;

/**
 * Trim when the resident set has grown by `minGrowthBytes` since the last trim. A trim
 * costs the kernel's time to take the pages back and glibc's walk of its free lists (one
 * madvise per free run of pages, ~15 µs each); measured under the soak mix on a loaded
 * 2-core virtual machine, 30-370 ms for 5-10 MiB. It runs on a thread of its own, so
 * the event loop goes on, and only when there is something to give back: under a
 * steady climb that is one trim every few tens of seconds, each giving back what
 * accumulated since the last.
 */
export function startTrimPolicy(o: TrimPolicyOptions): TrimPolicy {
  const rssNow = o.rssBytes ?? ((): number => process.memoryUsage.rss());
  const heapNow = o.heapBytes ?? ((): number => getHeapStatistics().total_physical_size);
  /** What malloc may hold: the resident set less V8's heap. */
  const rss = (): number => rssNow() - heapNow();
  const minGrowth = o.minGrowthBytes ?? 8 * 1024 * 1024;
  // The floor starts at the resident set when the policy starts: start-up's own garbage
  // is given back by the heap policy's first collection, which trims.
  let floor = rss();
  let running: { readonly beforeBytes: number; readonly heldBytes: number; readonly poll: NodeJS.Timeout } | undefined;
  const finish = (): void => {
    if (running === undefined) return;
    const ms = o.native.lastTrim();
    if (ms === -1) return;
    clearInterval(running.poll);
    floor = rss();
    const r = { beforeBytes: running.beforeBytes, afterBytes: floor, heldBytes: running.heldBytes, ms };
    running = undefined;
    o.onTrimmed?.(r);
  };
  const start = (before: number): boolean => {
    if (running !== undefined) return false;
    const heldBytes = o.native.held();
    if (!o.native.trimAsync()) return false;
    const poll = setInterval(finish, DONE_POLL_MS);
    poll.unref();
    running = { beforeBytes: before, heldBytes, poll };
    return true;
  };
  const policy: TrimPolicy = {
    tick() {
      finish();
      const now = rss();
      if (now < floor) floor = now;
      if (now - floor < minGrowth) return false;
      return start(now);
    },
    trim() {
      finish();
      start(rss());
    },
    stop() {
      clearInterval(timer);
      if (running !== undefined) clearInterval(running.poll);
    },
  };
  const timer = setInterval(() => policy.tick(), o.intervalMs ?? 10_000);
  timer.unref();
  return policy;
}
