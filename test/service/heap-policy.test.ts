// The heap policy (src/service/heap-policy.ts): one full collection after a burst, only
// when the event loop is quiet, never again until the heap has grown anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHeapPolicy } from '../../src/service/heap-policy.js';

const MiB = 1024 * 1024;

function rig(): {
  heap: number;
  elu: number;
  gcs: number;
  clock: number;
  busy: boolean[];
  policy: NonNullable<ReturnType<typeof startHeapPolicy>>;
} {
  const r = {
    heap: 50 * MiB,
    elu: 0,
    gcs: 0,
    clock: 0,
    busy: [] as boolean[],
    policy: undefined as unknown as NonNullable<ReturnType<typeof startHeapPolicy>>,
  };
  const p = startHeapPolicy({
    intervalMs: 3_600_000,
    minGrowthBytes: 24 * MiB,
    gc: () => {
      r.gcs++;
      r.heap = 60 * MiB;
    },
    heapBytes: () => r.heap,
    utilization: () => r.elu,
    now: () => r.clock,
    busyEveryMs: 30_000,
    busyGrowth: 0.15,
    onCollected: (c) => r.busy.push(c.busy),
  });
  assert.ok(p);
  r.policy = p;
  return r;
}

test('heap policy: a grown heap is collected once the loop is quiet, and only once', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.heap = 300 * MiB;
  r.elu = 0.9;
  assert.equal(r.policy.tick(), false, 'busy: no collection during the first 30 s of the burst');
  r.elu = 0.01;
  assert.equal(r.policy.tick(), true);
  assert.equal(r.gcs, 1);
  assert.equal(r.policy.tick(), false, 'the heap has not grown since');
  r.heap = 70 * MiB;
  assert.equal(r.policy.tick(), false, 'growth under the threshold');
  r.heap = 90 * MiB;
  assert.equal(r.policy.tick(), true, 'grown by the threshold again');
  assert.equal(r.gcs, 2);
});

test('heap policy: one collection at the first quiet moment after start, then none while the heap does not grow', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.elu = 0.5;
  assert.equal(r.policy.tick(), false, 'the start-up is still busy');
  r.elu = 0;
  assert.equal(r.policy.tick(), true, 'start-up is a burst too');
  for (let i = 0; i < 100; i++) assert.equal(r.policy.tick(), false);
  assert.equal(r.gcs, 1);
});

test('heap policy: a collection that frees nothing does not make it collect again and again', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.heap = 300 * MiB;
  const p = startHeapPolicy({
    intervalMs: 3_600_000,
    gc: () => void r.gcs++, // the heap stays at 300 MiB: all of it live
    heapBytes: () => r.heap,
    utilization: () => 0,
    minGrowthBytes: 24 * MiB,
  });
  assert.ok(p);
  t.after(() => p.stop());
  r.heap = 400 * MiB;
  assert.equal(p.tick(), true);
  for (let i = 0; i < 10; i++) assert.equal(p.tick(), false);
  assert.equal(r.gcs, 1);
});

test('heap policy: off when node was started without --expose-gc', () => {
  assert.equal(typeof (globalThis as { gc?: unknown }).gc === 'function', false, 'tests run without --expose-gc');
  assert.equal(startHeapPolicy(), undefined);
});

test('heap policy: under sustained load the heap is collected when it has grown by 15 %, at most once per 30 s', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.elu = 0.9; // never quiet: the soak mix
  r.heap = 100 * MiB;
  r.clock = 29_999;
  assert.equal(r.policy.tick(), false, 'not before 30 s since the start');
  r.clock = 30_000;
  assert.equal(r.policy.tick(), true, 'grown from nothing: collected while busy');
  assert.deepEqual(r.busy, [true]);
  assert.equal(r.heap, 60 * MiB);
  // The floor is now 60 MiB: 15 % of it is 9 MiB.
  r.heap = 68 * MiB;
  r.clock = 50_000;
  assert.equal(r.policy.tick(), false, 'grown by less than 15 % of the floor');
  r.heap = 70 * MiB;
  r.clock = 59_999; // 29,999 ms after the last collection
  assert.equal(r.policy.tick(), false, 'grown enough, but too soon after the last collection');
  r.clock = 60_000;
  assert.equal(r.policy.tick(), true, 'grown by 15 % and 30 s after the last one');
  assert.equal(r.gcs, 2);
});

test('heap policy: a small heap is not collected while busy for growth under 8 MiB', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.elu = 0.9;
  r.heap = 7 * MiB;
  r.clock = 1_000_000;
  assert.equal(r.policy.tick(), false);
  r.heap = 8 * MiB;
  assert.equal(r.policy.tick(), true);
});

test('heap policy: busyEveryMs 0 never collects while busy', (t) => {
  let gcs = 0;
  let clock = 0;
  const p = startHeapPolicy({
    intervalMs: 3_600_000,
    gc: () => void gcs++,
    heapBytes: () => 500 * MiB,
    utilization: () => 0.9,
    now: () => clock,
    busyEveryMs: 0,
  });
  assert.ok(p);
  t.after(() => p.stop());
  for (clock = 0; clock < 600_000; clock += 2_000) p.tick();
  assert.equal(gcs, 0);
});
