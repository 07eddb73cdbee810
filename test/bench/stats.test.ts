import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, percentile, percentileSorted, SampleBuffer, summarize } from '../../bench/harness/stats.js';

test('percentile interpolates between the two nearest ranks', () => {
  const s = [10, 20, 30, 40, 50];
  assert.equal(percentile(s, 0), 10);
  assert.equal(percentile(s, 100), 50);
  assert.equal(percentile(s, 50), 30);
  assert.equal(percentile(s, 25), 20);
  assert.equal(percentile(s, 10), 14); // rank 0.4 between 10 and 20
  assert.ok(Math.abs(percentile(s, 99) - 49.6) < 1e-9);
});

test('percentile sorts numerically, not as strings', () => {
  // A string sort would order these 100, 9, 10 and give 9 as the median.
  assert.equal(median([100, 9, 10]), 10);
  assert.equal(percentile([3, 1, 2], 100), 3);
});

test('even count median is the mean of the middle two', () => {
  assert.equal(median([1, 2, 3, 4]), 2.5);
});

test('p99 of 100 samples lies between the 99th and the 100th value', () => {
  const s = Array.from({ length: 100 }, (_, i) => i + 1);
  const p = percentile(s, 99);
  assert.ok(p > 99 && p < 100, String(p));
});

test('empty and single-sample inputs', () => {
  assert.ok(Number.isNaN(percentile([], 50)));
  assert.equal(percentile([7], 0), 7);
  assert.equal(percentile([7], 99), 7);
  const e = summarize([]);
  assert.equal(e.n, 0);
  assert.ok(Number.isNaN(e.p50) && Number.isNaN(e.mean) && Number.isNaN(e.min));
});

test('percentile outside 0..100 is refused', () => {
  assert.throws(() => percentileSorted([1, 2], 101), RangeError);
  assert.throws(() => percentileSorted([1, 2], -1), RangeError);
  assert.throws(() => percentileSorted([1, 2], Number.NaN), RangeError);
});

test('summarize gives min, max, mean and percentiles', () => {
  const s = summarize([5, 1, 4, 2, 3]);
  assert.deepEqual([s.n, s.min, s.max, s.mean, s.p50], [5, 1, 5, 3, 3]);
  assert.ok(s.p90 > 4 && s.p90 <= 5);
});

test('SampleBuffer grows past its initial capacity and keeps every sample', () => {
  const b = new SampleBuffer();
  for (let i = 0; i < 5000; i++) b.push(i);
  assert.equal(b.length, 5000);
  const v = b.values();
  assert.equal(v.length, 5000);
  assert.equal(v[0], 0);
  assert.equal(v[4999], 4999);
  assert.equal(median(v), 2499.5);
});
