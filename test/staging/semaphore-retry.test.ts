import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Semaphore } from '../../src/staging/semaphore.js';
import { retryDelay, withRetries } from '../../src/staging/retry.js';
import { stagingError } from '../../src/staging/staging-error.js';

describe('semaphore', () => {
  it('bounds holders, queues the rest in order and reports the counts', async () => {
    const s = new Semaphore(2);
    const a = await s.acquire();
    const b = await s.acquire();
    assert.equal(s.available(), false);
    const order: string[] = [];
    const c = s.acquire().then((r) => (order.push('c'), r));
    const d = s.acquire().then((r) => (order.push('d'), r));
    assert.deepEqual([s.active, s.queued], [2, 2]);
    a();
    a(); // double release is harmless
    const rc = await c;
    assert.deepEqual([s.active, s.queued], [2, 1]);
    b();
    const rd = await d;
    rc();
    rd();
    assert.deepEqual(order, ['c', 'd']);
    assert.deepEqual([s.active, s.queued, s.available()], [0, 0, true]);
  });

  it('an aborted waiter leaves the queue', async () => {
    const s = new Semaphore(1);
    const r = await s.acquire();
    const ctl = new AbortController();
    const w = s.acquire(ctl.signal);
    assert.equal(s.queued, 1);
    ctl.abort(new Error('gone'));
    await assert.rejects(w, /gone/);
    assert.equal(s.queued, 0);
    r();
    assert.equal(s.active, 0);
  });
});

describe('retries', () => {
  const policy = { maxAttempts: 4, initialDelayMs: 1, maxDelayMs: 5, multiplier: 2 };

  it('delays grow exponentially with jitter, capped, and honour Retry-After up to the cap', () => {
    const p = { maxAttempts: 9, initialDelayMs: 100, maxDelayMs: 1000, multiplier: 2 };
    assert.equal(retryDelay({ ...p, random: () => 1 }, 1), 100);
    assert.equal(retryDelay({ ...p, random: () => 0 }, 1), 50);
    assert.equal(retryDelay({ ...p, random: () => 1 }, 3), 400);
    assert.equal(retryDelay({ ...p, random: () => 1 }, 10), 1000);
    assert.equal(retryDelay({ ...p, random: () => 0 }, 1, 700), 700);
    assert.equal(retryDelay({ ...p, random: () => 0 }, 1, 60_000), 1000);
  });

  it('retries transient failures until success', async () => {
    const tally = { attempts: 0 };
    const v = await withRetries(policy, new AbortController().signal, tally, async (n) => {
      if (n < 3) throw stagingError('CE_ERR_STAGING_NETWORK', 'reset', { transient: true });
      return 'ok';
    });
    assert.equal(v, 'ok');
    assert.equal(tally.attempts, 3);
  });

  it('does not retry permanent failures', async () => {
    const tally = { attempts: 0 };
    await assert.rejects(
      withRetries(policy, new AbortController().signal, tally, () =>
        Promise.reject(stagingError('CE_ERR_STAGING_REMOTE_STATUS', '404 Not Found')),
      ),
      /404/,
    );
    assert.equal(tally.attempts, 1);
  });

  it('gives up after maxAttempts', async () => {
    const tally = { attempts: 0 };
    await assert.rejects(
      withRetries(policy, new AbortController().signal, tally, () =>
        Promise.reject(stagingError('CE_ERR_STAGING_NETWORK', 'refused', { transient: true })),
      ),
      /refused/,
    );
    assert.equal(tally.attempts, 4);
  });

  it('stops waiting when cancelled', async () => {
    const ctl = new AbortController();
    const tally = { attempts: 0 };
    const p = withRetries({ ...policy, initialDelayMs: 60_000, maxDelayMs: 60_000 }, ctl.signal, tally, () =>
      Promise.reject(stagingError('CE_ERR_STAGING_NETWORK', 'x', { transient: true })),
    );
    setTimeout(() => ctl.abort(new Error('cancelled by test')), 20);
    await assert.rejects(p, /cancelled by test/);
    assert.equal(tally.attempts, 1);
  });
});
