// The scheduler's slot book-keeping: the per-user running limit and the fair hand-out
// of freed SUBMIT slots between owners.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Slots, type Limits } from '../../src/engine/scheduler/slots.js';

const limits = (o: Partial<Limits>): Limits => ({
  maxPreparing: 0,
  maxRunning: 0,
  maxFinishing: 0,
  maxPerUser: 0,
  maxRunningPerUser: 0,
  ...o,
});

/** Puts `n` jobs of `owner` in the SUBMIT wait queue (as PENDING:PREPARING). */
function queue(s: Slots, owner: string, n: number): string[] {
  const ids = Array.from({ length: n }, (_, i) => `${owner}${i}`);
  for (const id of ids) {
    s.set(id, owner, 'PENDING:PREPARING');
    s.wait('SUBMIT', id, owner);
  }
  return ids;
}

/** Takes what may start now, recording each as SUBMIT (as the scheduler does). */
function drain(s: Slots): string[] {
  const out: string[] = [];
  for (let id = s.takeNext('SUBMIT'); id !== undefined; id = s.takeNext('SUBMIT')) {
    s.set(id, id.replace(/\d+$/, ''), 'SUBMIT');
    out.push(id);
  }
  return out;
}

describe('per-user running limit', () => {
  it('an owner at the limit may not enter SUBMIT; others may', () => {
    const s = new Slots(limits({ maxRunningPerUser: 2 }));
    s.set('a0', 'a', 'SUBMIT');
    assert.equal(s.mayEnter('SUBMIT', 'a'), true);
    s.set('a1', 'a', 'INLRMS');
    assert.equal(s.mayEnter('SUBMIT', 'a'), false);
    assert.equal(s.mayEnter('SUBMIT', 'b'), true);
    assert.equal(s.runningOf('a'), 2);
    s.set('a1', 'a', 'FINISHING');
    assert.equal(s.mayEnter('SUBMIT', 'a'), true);
    assert.equal(s.runningOf('a'), 1);
    s.set('a0', 'a', undefined);
    assert.equal(s.runningOf('a'), 0);
  });

  it('0 means no per-user limit; the global limit still applies to everyone', () => {
    const s = new Slots(limits({ maxRunning: 3 }));
    queue(s, 'a', 10);
    assert.deepEqual(drain(s), ['a0', 'a1', 'a2']);
    assert.equal(s.mayEnter('SUBMIT', 'b'), false);
  });

  it("a flood gets its share only; another owner's single job goes at once", () => {
    const s = new Slots(limits({ maxRunning: 4, maxRunningPerUser: 2 }));
    queue(s, 'a', 1000);
    assert.deepEqual(drain(s), ['a0', 'a1']);
    queue(s, 'b', 1);
    assert.deepEqual(drain(s), ['b0']);
    assert.equal(s.waitingCount('SUBMIT'), 998);
  });

  it('freed slots go to owners in turn, skipping those at their limit', () => {
    const s = new Slots(limits({ maxRunning: 3, maxRunningPerUser: 2 }));
    queue(s, 'a', 5);
    queue(s, 'b', 5);
    queue(s, 'c', 5);
    assert.deepEqual(drain(s), ['a0', 'b0', 'c0']);
    // a0 ends: the next in turn is a (a1), as it is under its limit.
    s.set('a0', 'a', 'FINISHING');
    assert.deepEqual(drain(s), ['a1']);
    // Global limit lifted by two more endings: b and c get theirs, a keeps its turn.
    s.set('b0', 'b', undefined);
    s.set('c0', 'c', undefined);
    assert.deepEqual(drain(s), ['b1', 'c1']);
  });

  it('an owner at the limit keeps its place in the turn and gets the next slot it may take', () => {
    const s = new Slots(limits({ maxRunningPerUser: 1 }));
    queue(s, 'a', 3);
    queue(s, 'b', 1);
    assert.deepEqual(drain(s), ['a0', 'b0']);
    assert.equal(s.takeNext('SUBMIT'), undefined, 'a is at its limit, b has nothing waiting');
    s.set('a0', 'a', 'FINISHING');
    assert.deepEqual(drain(s), ['a1']);
    s.unwait('a2');
    s.set('a1', 'a', undefined);
    assert.deepEqual(drain(s), []);
    assert.equal(s.waitingCount('SUBMIT'), 0);
  });
});

describe('active limit (jobs picked up at all)', () => {
  it('0 means none; otherwise picked-up jobs and granted ones count', () => {
    assert.equal(new Slots(limits({})).free('ACCEPT'), true);
    const s = new Slots(limits({ maxActive: 2 }));
    s.set('a0', 'a', 'ACCEPTED');
    assert.equal(s.free('ACCEPT'), true, 'a job not picked up does not count');
    s.set('a0', 'a', 'PENDING:ACCEPTED');
    s.set('a1', 'a', 'PREPARING');
    assert.equal(s.free('ACCEPT'), false);
    s.set('b0', 'b', 'ACCEPTED');
    s.wait('ACCEPT', 'b0', 'b');
    assert.equal(s.takeNext('ACCEPT'), undefined);
    s.set('a1', 'a', undefined);
    assert.equal(s.takeNext('ACCEPT'), 'b0');
    assert.equal(s.free('ACCEPT'), false, 'the grant holds the slot until b0 is picked up');
    assert.equal(s.takeGrant('b0'), true);
    assert.equal(s.takeGrant('b0'), false);
    assert.equal(s.free('ACCEPT'), true, 'a grant given back frees the slot');
  });

  it('a picked-up job ends its grant', () => {
    const s = new Slots(limits({ maxActive: 1 }));
    s.set('a0', 'a', 'ACCEPTED');
    s.wait('ACCEPT', 'a0', 'a');
    assert.equal(s.takeNext('ACCEPT'), 'a0');
    s.set('a0', 'a', 'PREPARING');
    assert.equal(s.takeGrant('a0'), false);
    assert.equal(s.free('ACCEPT'), false);
    s.set('a0', 'a', undefined);
    assert.equal(s.free('ACCEPT'), true);
  });
});

describe('wait queues', () => {
  it('waiting twice queues once; unwait of a job not waiting is harmless; a job waits for one step', () => {
    const s = new Slots(limits({ maxRunning: 1 }));
    s.set('x', 'a', 'SUBMIT');
    s.wait('SUBMIT', 'a0', 'a');
    s.wait('SUBMIT', 'a0', 'a');
    assert.equal(s.waitingCount('SUBMIT'), 1);
    s.unwait('nope');
    s.wait('FINISHING', 'a0', 'a');
    assert.equal(s.waitingCount('SUBMIT'), 0);
    assert.equal(s.waitingCount('FINISHING'), 1);
    s.unwait('a0');
    assert.equal(s.waitingCount('FINISHING'), 0);
  });

  it('100,000 waiting jobs: queueing and unqueueing stay cheap', () => {
    const s = new Slots(limits({ maxRunning: 1 }));
    s.set('x', 'a', 'SUBMIT');
    const t0 = performance.now();
    for (let i = 0; i < 100_000; i++) s.wait('SUBMIT', `a${i}`, 'a');
    for (let i = 0; i < 100_000; i++) s.unwait(`other${i}`);
    const ms = performance.now() - t0;
    assert.equal(s.waitingCount('SUBMIT'), 100_000);
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
  });
});
