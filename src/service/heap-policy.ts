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
 * Needs `gc` (node --expose-gc, which bin/ceres passes); without it the policy is off.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

export interface HeapPolicyOptions {
  readonly intervalMs?: number;
  readonly quietElu?: number;
  readonly minGrowthBytes?: number;
  /** The collector (default: globalThis.gc when exposed). */
  readonly gc?: () => void;
  /** Heap size now (default: V8's used + committed-but-free old space, i.e. total heap size). */
  readonly heapBytes?: () => number;
  /** Event-loop utilization since the previous sample, 0..1 (default: perf_hooks). */
  readonly utilization?: () => number;
  readonly onCollected?: (r: {
    readonly beforeBytes: number;
    readonly afterBytes: number;
    readonly ms: number;
  }) => void;
}

export interface HeapPolicy {
  /** One sample (the timer calls it; tests call it directly). Returns whether it collected. */
  tick(): boolean;
  stop(): void;
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
  const policy: HeapPolicy = {
    tick() {
      const elu = utilization();
      const before = heapBytes();
      if (before < floor) floor = before;
      if (elu >= quietElu || before - floor < minGrowth) return false;
      const t0 = performance.now();
      gc();
      const after = heapBytes();
      floor = after;
      o.onCollected?.({ beforeBytes: before, afterBytes: after, ms: performance.now() - t0 });
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
