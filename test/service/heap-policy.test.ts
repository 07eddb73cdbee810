// The heap policy (src/service/heap-policy.ts): one full collection after a burst, only
// when the event loop is quiet, never again until the heap has grown anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHeapPolicy } from '../../src/service/heap-policy.js';

const MiB = 1024 * 1024;

function rig(): { heap: number; elu: number; gcs: number; policy: NonNullable<ReturnType<typeof startHeapPolicy>> } {
  const r = {
    heap: 50 * MiB,
    elu: 0,
    gcs: 0,
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
  assert.equal(r.policy.tick(), false, 'busy: no collection during the burst');
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
