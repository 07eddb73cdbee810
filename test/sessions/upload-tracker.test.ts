import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UploadTracker } from '../../src/sessions/upload-tracker.js';

describe('upload completion tracking', () => {
  it('in-order chunks complete exactly when the last byte arrives', () => {
    const t = new UploadTracker();
    assert.equal(t.received('j', 'f', 0, 4, 10), false);
    assert.equal(t.received('j', 'f', 4, 8, 10), false);
    assert.equal(t.size, 1);
    assert.equal(t.received('j', 'f', 8, 10, 10), true);
    assert.equal(t.size, 0, 'a completed file is forgotten');
  });

  it('out-of-order and overlapping chunks complete when [0,total) is covered', () => {
    const t = new UploadTracker();
    assert.equal(t.received('j', 'f', 6, 10, 10), false);
    assert.equal(t.received('j', 'f', 2, 7, 10), false);
    assert.equal(t.received('j', 'f', 1, 3, 10), false);
    assert.equal(t.received('j', 'f', 0, 1, 10), true);
  });

  it('a gap keeps the file incomplete; a total learnt later is used', () => {
    const t = new UploadTracker();
    assert.equal(t.received('j', 'f', 0, 4, undefined), false);
    assert.equal(t.received('j', 'f', 5, 8, undefined), false);
    assert.equal(t.received('j', 'f', 8, 10, 10), false, 'byte 4 is missing');
    assert.equal(t.received('j', 'f', 4, 5, undefined), true);
  });

  it('never completes without a total', () => {
    const t = new UploadTracker();
    assert.equal(t.received('j', 'f', 0, 100, undefined), false);
  });

  it('a different total restarts the upload', () => {
    const t = new UploadTracker();
    assert.equal(t.received('j', 'f', 0, 5, 10), false);
    assert.equal(t.received('j', 'f', 5, 8, 8), false, 'the old 0-5 belongs to another upload');
    assert.equal(t.received('j', 'f', 0, 5, 8), true);
  });

  it('files and jobs are tracked separately', () => {
    const t = new UploadTracker();
    t.received('j1', 'f', 0, 5, 10);
    assert.equal(t.received('j2', 'f', 5, 10, 10), false);
    assert.equal(t.received('j1', 'g', 5, 10, 10), false);
    assert.equal(t.received('j1', 'f', 5, 10, 10), true);
  });

  it('forget drops a file, a directory subtree or a whole job', () => {
    const t = new UploadTracker();
    for (const p of ['a', 'd/x', 'd/y', 'dd/z']) t.received('j', p, 0, 1, 2);
    t.received('k', 'd/x', 0, 1, 2);
    t.forget('j', 'a');
    assert.equal(t.size, 4);
    t.forget('j', 'd', true);
    assert.equal(t.size, 2, 'd/x and d/y gone, dd/z and k kept');
    assert.equal(t.received('j', 'dd/z', 1, 2, 2), true);
    t.forgetJob('k');
    assert.equal(t.size, 0);
  });

  it('holds at most maxFiles files, evicting the least recently touched', () => {
    const t = new UploadTracker({ maxFiles: 3 });
    for (const f of ['a', 'b', 'c']) t.received('j', f, 0, 1, 2);
    t.received('j', 'a', 1, 1, 2); // touch a
    t.received('j', 'd', 0, 1, 2); // evicts b
    assert.equal(t.size, 3);
    assert.equal(t.received('j', 'a', 1, 2, 2), true, 'a survived');
    assert.equal(t.received('j', 'b', 1, 2, 2), false, 'b was evicted: its first half is unknown');
  });

  it('refuses in advance a range that would exceed maxRanges disjoint ranges', () => {
    const t = new UploadTracker({ maxRanges: 3 });
    t.received('j', 'f', 0, 1, 100);
    t.received('j', 'f', 10, 11, 100);
    t.received('j', 'f', 20, 21, 100);
    assert.equal(t.canAccept('j', 'f', 30, 31), false);
    assert.equal(t.canAccept('j', 'f', 1, 10), true, 'a range merging two is fine');
    assert.equal(t.canAccept('j', 'f', 21, 25), true, 'an adjacent range merges');
    assert.equal(t.canAccept('j', 'other', 30, 31), true);
  });

  it('property: any split of [0,n) into chunks, in any order, completes exactly at the last chunk', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.integer({ min: 1, max: 199 }), { maxLength: 20 }),
        fc.integer(),
        (n, cuts, seed) => {
          const points = [...new Set([0, n, ...cuts.filter((c) => c < n)])].sort((a, b) => a - b);
          const chunks: [number, number][] = [];
          for (let i = 0; i + 1 < points.length; i++) chunks.push([points[i] as number, points[i + 1] as number]);
          // deterministic shuffle
          let s = seed >>> 0;
          for (let i = chunks.length - 1; i > 0; i--) {
            s = (s * 1103515245 + 12345) >>> 0;
            const j = s % (i + 1);
            [chunks[i], chunks[j]] = [chunks[j] as [number, number], chunks[i] as [number, number]];
          }
          const t = new UploadTracker({ maxRanges: 1000 });
          chunks.forEach(([a, b], i) => {
            assert.equal(t.received('j', 'f', a, b, n), i === chunks.length - 1);
          });
        },
      ),
    );
  });
});
