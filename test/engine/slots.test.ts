// The scheduler's slot book-keeping: the per-user running limit and the fair hand-out
// of freed SUBMIT slots between owners.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Slots, type Limits } from '../../src/engine/scheduler/slots.js';

const limits = (o: Partial<Limits>): Limits => ({ maxPreparing: 0, maxRunning: 0, maxFinishing: 0, maxPerUser: 0, maxRunningPerUser: 0, ...o });

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

  it('a flood gets its share only; another owner\'s single job goes at once', () => {
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
