// The heap policy (src/process/heap-policy.ts): one full collection after a burst, only
// when the event loop is quiet, never again until the heap has grown anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHeapPolicy } from '../../src/process/heap-policy.js';

const MiB = 1024 * 1024;

function rig(): {
  heap: number;
  elu: number;
  gcs: number;
  clock: number;
  young: number;
  kinds: string[];
  policy: NonNullable<ReturnType<typeof startHeapPolicy>>;
} {
  const r = {
    heap: 50 * MiB,
    elu: 0,
    gcs: 0,
    clock: 0,
    young: 1 * MiB,
    kinds: [] as string[],
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
    youngBytes: () => r.young,
    onCollected: (c) => r.kinds.push(c.kind),
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
    youngBytes: () => 1 * MiB,
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
  assert.deepEqual(r.kinds, ['sustained']);
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

test('heap policy: an idle service collects once to shrink a large young generation, then not until busy again', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.young = 32 * MiB;
  r.elu = 0;
  assert.equal(r.policy.tick(), true, 'the first quiet moment after start-up');
  assert.deepEqual(r.kinds, ['burst']);
  assert.equal(r.policy.tick(), false);
  assert.equal(r.policy.tick(), false);
  assert.equal(r.policy.tick(), true, 'four quiet samples in a row');
  assert.deepEqual(r.kinds, ['burst', 'idle']);
  // V8 kept the young generation (allocation had not slowed enough): no collection every
  // two seconds for as long as the service is idle.
  for (let i = 0; i < 100; i++) assert.equal(r.policy.tick(), false);
  r.elu = 0.5;
  assert.equal(r.policy.tick(), false, 'busy again');
  r.elu = 0;
  for (let i = 0; i < 3; i++) assert.equal(r.policy.tick(), false);
  assert.equal(r.policy.tick(), true, 'a new quiet spell gets its own idle collection');
  assert.deepEqual(r.kinds, ['burst', 'idle', 'idle']);
});

test('heap policy: no idle collection when the young generation is small, or the loop is not quiet long enough', (t) => {
  const r = rig();
  t.after(() => r.policy.stop());
  r.elu = 0;
  assert.equal(r.policy.tick(), true, 'start-up');
  for (let i = 0; i < 20; i++) assert.equal(r.policy.tick(), false, 'young generation at its minimum');
  r.young = 32 * MiB;
  r.elu = 0.5;
  assert.equal(r.policy.tick(), false, 'busy');
  for (let i = 0; i < 20; i++) {
    r.elu = i % 3 === 2 ? 0.5 : 0; // never four quiet samples in a row
    assert.equal(r.policy.tick(), false);
  }
  assert.deepEqual(r.kinds, ['burst']);
});

// The real V8: without the idle collection its young generation stays at 32 MiB for as
// long as the process lives (the memory reducer is off, as bin/ceres runs it).
test('heap policy: with the real V8, an idle process gives its young generation back', async () => {
  const policyUrl = new URL('../../src/process/heap-policy.js', import.meta.url).href;
  const code = `
    import { startHeapPolicy } from ${JSON.stringify(policyUrl)};
    import { getHeapSpaceStatistics } from 'node:v8';
    const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    startHeapPolicy({ intervalMs: 1000, idleTicks: 6 });
    const keep = [];
    for (let i = 0; i < 3e6; i++) { const o = { i, s: 'x' + i }; if (i % 50 === 0) keep.push(o); }
    const grown = young();
    const t0 = Date.now();
    const timer = setInterval(() => {
      if (young() <= 4 * 1048576 || Date.now() - t0 > 30000) {
        clearInterval(timer);
        console.log(JSON.stringify({ grown, after: young(), kept: keep.length }));
      }
    }, 250);`;
  const { execFile } = await import('node:child_process');
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--expose-gc', '--no-memory-reducer', '--input-type=module', '-e', code],
      { timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
  const r = JSON.parse(out) as { grown: number; after: number };
  assert.ok(r.grown > 8 * MiB, `the allocation grew the young generation (${r.grown} bytes)`);
  assert.ok(r.after <= 4 * MiB, `young generation at rest: ${r.after} bytes`);
});
