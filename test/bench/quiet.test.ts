import { test } from 'node:test';
import assert from 'node:assert/strict';
import { doneWaiting, waitForQuiet } from '../../bench/harness/quiet.js';

const base = { maxWaitS: 30, serverWaitS: 180, thresholdPct: 15 };

test('quiet machine and idle endpoint: go', () => {
  assert.equal(doneWaiting({ ...base, busyPct: 5, serverPct: 1, waitedS: 1 }), true);
  assert.equal(doneWaiting({ ...base, busyPct: 5, serverPct: undefined, waitedS: 1 }), true);
});

test('a busy endpoint is waited for longer than a busy machine', () => {
  assert.equal(doneWaiting({ ...base, busyPct: 5, serverPct: 60, waitedS: 31 }), false);
  assert.equal(doneWaiting({ ...base, busyPct: 5, serverPct: 60, waitedS: 179 }), false);
  assert.equal(doneWaiting({ ...base, busyPct: 5, serverPct: 60, waitedS: 180 }), true);
});

test('other load on the machine is waited for only up to maxWaitS', () => {
  assert.equal(doneWaiting({ ...base, busyPct: 150, serverPct: 0, waitedS: 10 }), false);
  assert.equal(doneWaiting({ ...base, busyPct: 150, serverPct: 0, waitedS: 30 }), true);
  assert.equal(doneWaiting({ ...base, busyPct: 150, serverPct: undefined, waitedS: 30 }), true);
});

test('a real wait samples one second and reports what it saw', async () => {
  const r = await waitForQuiet({ maxWaitS: 0, serverWaitS: 0, pids: [process.pid] });
  assert.ok(r.waitedS >= 0.9 && r.waitedS < 10, String(r.waitedS));
  assert.ok(Number.isFinite(r.busyPct) && r.busyPct >= 0);
  assert.ok(r.serverBusyPct !== undefined && r.serverBusyPct >= 0 && r.serverBusyPct < 100);
});
