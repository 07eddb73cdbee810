// The sweeper's failure path: a pass that throws must reach the callers of sweep(), never
// leave them waiting nor surface as an unhandled rejection, and the next sweep still runs.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessSweeper } from '../../src/lrms/fork/job-processes.js';

const job = { mark: 'ceres-sweeper-test-no-such-mark' };

it('a failing pass rejects every sweep of its batch, and a later sweep runs again', async () => {
  let fail = true;
  const sweeper = new ProcessSweeper(() => {
    if (fail) throw new Error('spare set unavailable');
    return new Set([process.pid]);
  });
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => void unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const outcomes = await Promise.race([
      Promise.allSettled([sweeper.sweep(job), sweeper.sweep(job)]),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref()),
    ]);
    assert.notEqual(outcomes, 'hung', 'sweep() never settled');
    for (const o of outcomes as PromiseSettledResult<void>[]) {
      assert.equal(o.status, 'rejected');
      assert.match(String(o.reason), /spare set unavailable/);
    }
    fail = false;
    await sweeper.sweep(job);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
