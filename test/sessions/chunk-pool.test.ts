import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CHUNK_BYTES, giveChunk, takeChunk } from '../../src/sessions/chunk-pool.js';

describe('chunk pool', () => {
  it('hands out 1 MiB buffers and reuses one given back', () => {
    const a = takeChunk();
    assert.equal(a.length, CHUNK_BYTES);
    giveChunk(a);
    assert.equal(takeChunk(), a);
  });

  it('never hands out the same buffer twice when it was given back twice', () => {
    const a = takeChunk();
    giveChunk(a);
    giveChunk(a);
    const x = takeChunk();
    const y = takeChunk();
    assert.notEqual(x, y);
  });

  it('refuses buffers of another size (a slice must not enter the pool)', () => {
    const a = takeChunk();
    giveChunk(a.subarray(0, 10));
    const b = takeChunk();
    assert.notEqual(b.length, 10);
    assert.equal(b.length, CHUNK_BYTES);
  });

  it('keeps at most a few idle buffers', () => {
    const many = Array.from({ length: 20 }, () => takeChunk());
    for (const b of many) giveChunk(b);
    const back = Array.from({ length: 20 }, () => takeChunk());
    assert.ok(back.filter((b) => many.includes(b)).length <= 8);
  });
});
