// The compact job index (src/store/job-index.ts): one small integer per job. Its
// agreement with the table is tested through JobStore (job-store-states.test.ts); here
// the packing itself, its limits and what a refused write leaves behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobIndex } from '../../src/store/job-index.js';

test('job index: owner and state read back exactly, for many owners and every state', () => {
  const ix = new JobIndex();
  const states = ['ACCEPTING', 'ACCEPTED', 'PREPARING', 'PREPARED', 'SUBMITTING', 'QUEUING', 'RUNNING', 'FINISHED'];
  for (let i = 0; i < 5000; i++) ix.set(`j${i}`, `/CN=user ${i % 1500}`, states[i % states.length]!);
  assert.equal(ix.size, 5000);
  for (let i = 0; i < 5000; i++) {
    assert.equal(ix.restStateOwned(`j${i}`, `/CN=user ${i % 1500}`), states[i % states.length]);
    assert.equal(ix.restStateOwned(`j${i}`, `/CN=user ${(i + 1) % 1500}`), undefined);
    assert.deepEqual(ix.entry(`j${i}`), { owner: `/CN=user ${i % 1500}`, restState: states[i % states.length] });
  }
});

test('job index: an unknown id, an unknown owner and a deleted job own nothing', () => {
  const ix = new JobIndex();
  ix.set('a', 'alice', 'RUNNING');
  assert.equal(ix.restStateOwned('b', 'alice'), undefined);
  assert.equal(ix.restStateOwned('a', 'mallory'), undefined);
  assert.equal(ix.restStateOwned('a', ''), undefined);
  assert.equal(ix.has('b'), false);
  assert.equal(ix.entry('b'), undefined);
  ix.delete('a');
  ix.delete('a');
  assert.equal(ix.restStateOwned('a', 'alice'), undefined);
  assert.equal(ix.size, 0);
});

test('job index: a new owner or state replaces the old value in place', () => {
  const ix = new JobIndex();
  ix.set('a', 'alice', 'ACCEPTING');
  ix.set('a', 'bob', 'FINISHED');
  assert.equal(ix.size, 1);
  assert.equal(ix.restStateOwned('a', 'alice'), undefined);
  assert.equal(ix.restStateOwned('a', 'bob'), 'FINISHED');
});

test('job index: past the distinct-state limit a write is refused and the entry stays as it was', () => {
  const ix = new JobIndex();
  ix.set('a', 'alice', 'S0');
  for (let i = 1; i < 32; i++) ix.set(`j${i}`, 'alice', `S${i}`);
  assert.throws(() => ix.set('a', 'alice', 'S32'), RangeError);
  assert.throws(() => ix.set('new', 'alice', 'S33'), RangeError);
  assert.equal(ix.restStateOwned('a', 'alice'), 'S0');
  assert.equal(ix.has('new'), false);
  // Values already numbered still work.
  ix.set('a', 'alice', 'S31');
  assert.equal(ix.restStateOwned('a', 'alice'), 'S31');
});
