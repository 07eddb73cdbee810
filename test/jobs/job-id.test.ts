import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPlausibleJobId, newJobId } from '../../src/jobs/job-id.js';

test('job ids: 26 characters of lower-case base32, distinct across many refills of the random pool', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const id = newJobId();
    assert.match(id, /^[a-z2-7]{26}$/);
    assert.ok(isPlausibleJobId(id));
    seen.add(id);
  }
  assert.equal(seen.size, 5000);
});

test('job ids: every character position takes many values (no byte of the pool is reused)', () => {
  const ids = Array.from({ length: 2000 }, () => newJobId());
  for (let pos = 0; pos < 25; pos++) {
    const values = new Set(ids.map((id) => id[pos]));
    assert.equal(values.size, 32, `position ${pos}`);
  }
  // The last character carries 3 bits of the 128: first 5 bits of 8 of the final byte.
  assert.ok(new Set(ids.map((id) => id[25])).size >= 4);
});
