// Request ids drawn from a pooled random buffer (src/http/request-id.ts): the pool is
// refilled, never reused, so ids across several refills stay distinct.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newRequestId } from '../../src/http/request-id.js';

test('request ids: 12 hex digits, all distinct across several refills of the pool', () => {
  const ids = Array.from({ length: 2000 }, () => newRequestId());
  for (const id of ids) assert.match(id, /^[0-9a-f]{12}$/);
  assert.equal(new Set(ids).size, ids.length);
});
