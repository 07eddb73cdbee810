import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { EVERY_BYTES, bodyBytesReceived } from '../../src/sessions/upload-gc.js';

/** Young-generation collections seen while `fn` runs (and shortly after). */
async function minorGcsDuring(fn: () => void): Promise<number> {
  let n = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) n++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  fn();
  await new Promise((r) => setTimeout(r, 50));
  obs.disconnect();
  return n;
}

describe('upload body garbage', () => {
  it('collects the young generation once per EVERY_BYTES of body received', async () => {
    bodyBytesReceived(EVERY_BYTES); // whatever was counted before starts afresh
    const seen = await minorGcsDuring(() => {
      for (let i = 0; i < 4; i++) bodyBytesReceived(EVERY_BYTES);
    });
    assert.ok(seen >= 4, `${seen} young-generation collections`);
  });

  it('does not collect for less', async () => {
    bodyBytesReceived(EVERY_BYTES);
    const seen = await minorGcsDuring(() => bodyBytesReceived(1024));
    assert.equal(seen, 0);
  });

  it('never exposes gc() to the service code', () => {
    bodyBytesReceived(EVERY_BYTES);
    assert.equal((globalThis as { gc?: unknown }).gc, undefined);
  });
});
