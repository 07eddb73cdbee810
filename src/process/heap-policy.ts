/**
 * Returning memory after a burst (docs/operations.md, "Memory"; docs/performance.md,
 * "Memory"). The launcher runs node with `--no-memory-reducer`: V8's reducer runs
 * full collections during the quiet spells of an upload and slowed uploads by a third.
 * Without it, the old generation a burst grew into (garbage promoted while thousands
 * of jobs were in flight) stayed committed: 300 MiB of heap for 55 MiB of live data.
 *
 * This policy runs one full collection when a burst is over instead: sampled every
 * `intervalMs`, when the event loop was quiet for a whole interval (utilization under
 * `quietElu`) and the heap holds at least `minGrowthBytes` more than after the last
 * collection. A full collection frees the pages the garbage occupied. An upload keeps
 * the loop busy, so it never waits on this; a trickling one sees at most one
 * collection per burst, since the heap has to grow again before the next.
 *
 * Sustained load has no quiet spell, and there the heap crept: under the soak mix
 * (docs/performance.md, "Soak memory") the old generation's committed pages grew from
 * 41 to 61 MiB in five minutes while the live data stayed flat. So a busy spell counts
 * as a burst too, at a slower cadence: when the loop has not been quiet but the heap
 * has grown by `busyGrowth` of the floor, one collection, at most once every
 * `busyEveryMs`. A full collection of this service's heap takes tens of milliseconds,
 * so the cost is a fraction of a percent of the loop; an upload is a busy spell of
 * its own and sees at most one such collection per `busyEveryMs`.
 *
 * The young generation is the third thing it gives back. V8 grows it to 32 MiB (two
 * 16 MiB semi-spaces) within the start-up's first second, and under any load after, and
 * shrinks it again only in a full collection that finds allocation has nearly stopped
 * (under about 1 MB/s over the last few seconds). The memory reducer that would run such
 * a collection is off, so an idle service kept 32 MiB of empty young generation resident,
 * a third of its memory at rest. So once the loop has been quiet for `idleTicks` samples
 * in a row (long enough for V8's allocation rate to fall) and the young generation is
 * larger than `youngIdleBytes`, it runs one collection, and no other until the loop has
 * been busy again. Load grows the young generation back within a few scavenges.
 *
 * Needs `gc` (node --expose-gc, which bin/ceres passes); without it the policy is off.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

/** Why the policy collected. */
export type HeapCollectionKind = 'burst' | 'sustained' | 'idle';

export interface HeapPolicyOptions {
  readonly intervalMs?: number;
  readonly quietElu?: number;
  readonly minGrowthBytes?: number;
  /** Shortest time between two collections while the loop is busy (0: never while busy). */
  readonly busyEveryMs?: number;
  /** Growth over the floor, as a fraction of it, that makes a collection while busy. */
  readonly busyGrowth?: number;
  /** Monotonic clock in ms (tests). */
  readonly now?: () => number;
  /** The collector (default: globalThis.gc when exposed). */
  readonly gc?: () => void;
  /** Heap size now (default: V8's used + committed-but-free old space, i.e. total heap size). */
  readonly heapBytes?: () => number;
  /** Quiet samples in a row before the idle collection that shrinks the young generation. */
  readonly idleTicks?: number;
  /** Young generation size above which an idle service collects to shrink it. */
  readonly youngIdleBytes?: number;
  /** The young generation's committed size (default: V8's new space). */
  readonly youngBytes?: () => number;
  /** Event-loop utilization since the previous sample, 0..1 (default: perf_hooks). */
  readonly utilization?: () => number;
  readonly onCollected?: (r: {
    readonly beforeBytes: number;
    readonly afterBytes: number;
    readonly ms: number;
    /** After a burst (quiet loop, grown heap), under sustained load, or idle (young generation). */
    readonly kind: HeapCollectionKind;
  }) => void;
}

export interface HeapPolicy {
  /** One sample (the timer calls it; tests call it directly). Returns whether it collected. */
  tick(): boolean;
  stop(): void;
}

/** A busy collection never runs for less growth than this (a small heap's 15 % is noise). */
const MIN_BUSY_GROWTH = 8 * 1024 * 1024;

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

export function startHeapPolicy(o: HeapPolicyOptions = {}): HeapPolicy | undefined {
  const gc = o.gc ?? (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return undefined;
  const quietElu = o.quietElu ?? 0.05;
  const minGrowth = o.minGrowthBytes ?? 24 * 1024 * 1024;
  const heapBytes = o.heapBytes ?? ((): number => getHeapStatistics().total_heap_size);
  let last: EventLoopUtilization | undefined;
  const utilization =
    o.utilization ??
    ((): number => {
      const now = performance.eventLoopUtilization();
      const d = last === undefined ? now : performance.eventLoopUtilization(now, last);
      last = now;
      return d.utilization;
    });
  utilization();
  // The floor the heap is compared with: its size after the last collection. It starts at
  // zero, so the first quiet moment after the start-up (a burst of its own: modules
  // compiled, the job index filled) collects once.
  let floor = 0;
  const busyEvery = o.busyEveryMs ?? 30_000;
  const busyGrowth = o.busyGrowth ?? 0.15;
  const now = o.now ?? ((): number => performance.now());
  const idleTicks = o.idleTicks ?? 4;
  const youngIdle = o.youngIdleBytes ?? 4 * 1024 * 1024;
  const youngBytes = o.youngBytes ?? newSpaceBytes;
  let lastAt = now();
  // Quiet samples in a row, and whether this quiet spell already had its idle collection.
  let quietRun = 0;
  let idleDone = false;
  const policy: HeapPolicy = {
    tick() {
      const elu = utilization();
      const before = heapBytes();
      if (before < floor) floor = before;
      const grown = before - floor;
      const busy = elu >= quietElu;
      if (busy) {
        quietRun = 0;
        idleDone = false;
      } else quietRun++;
      let kind: HeapCollectionKind | undefined;
      if (busy) {
        if (busyEvery > 0 && now() - lastAt >= busyEvery && grown >= Math.max(MIN_BUSY_GROWTH, floor * busyGrowth))
          kind = 'sustained';
      } else if (grown >= minGrowth) kind = 'burst';
      else if (quietRun >= idleTicks && !idleDone && youngBytes() > youngIdle) kind = 'idle';
      if (kind === undefined) return false;
      if (kind === 'idle') idleDone = true;
      const t0 = performance.now();
      gc();
      const after = heapBytes();
      floor = after;
      lastAt = now();
      o.onCollected?.({ beforeBytes: before, afterBytes: after, ms: performance.now() - t0, kind });
      return true;
    },
    stop() {
      clearInterval(timer);
    },
  };
  const timer = setInterval(() => policy.tick(), o.intervalMs ?? 2000);
  timer.unref();
  return policy;
}
