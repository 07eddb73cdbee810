// The scheduler's slot book-keeping: the per-user running limit and the fair hand-out
// of freed SUBMIT slots between owners.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Slots, type Limits, type WaitStep } from '../../src/engine/scheduler/slots.js';

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
    // This process's CPU time, not the wall clock: with other test files running beside it the
    // wall clock also counts their turns on the CPUs (1.5 s of it seen on a loaded machine).
    // A queue that scanned its entries on each call would take minutes.
    const t0 = process.cpuUsage();
    for (let i = 0; i < 100_000; i++) s.wait('SUBMIT', `a${i}`, 'a');
    for (let i = 0; i < 100_000; i++) s.unwait(`other${i}`);
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    assert.equal(s.waitingCount('SUBMIT'), 100_000);
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms of CPU`);
  });
});

/**
 * The queue semantics the compact book-keeping must keep: per owner a FIFO per step,
 * owners in turn, a job waits for one step at a time, unwait takes it out of turn.
 * Written the plain way (arrays, splice) to compare against.
 */
class QueueModel {
  readonly q = new Map<WaitStep, Map<string, string[]>>();
  readonly turn = new Map<WaitStep, string[]>();
  readonly at = new Map<string, { step: WaitStep; owner: string }>();
  wait(step: WaitStep, id: string, owner: string): void {
    if (this.at.get(id)?.step === step) return;
    this.unwait(id);
    const byOwner = this.q.get(step) ?? new Map<string, string[]>();
    this.q.set(step, byOwner);
    let list = byOwner.get(owner);
    if (!list) {
      byOwner.set(owner, (list = []));
      this.turn.set(step, [...(this.turn.get(step) ?? []), owner]);
    }
    list.push(id);
    this.at.set(id, { step, owner });
  }
  unwait(id: string): void {
    const a = this.at.get(id);
    if (!a) return;
    this.at.delete(id);
    const list = this.q.get(a.step)!.get(a.owner)!;
    list.splice(list.indexOf(id), 1);
    if (list.length === 0) {
      this.q.get(a.step)!.delete(a.owner);
      this.turn.set(
        a.step,
        this.turn.get(a.step)!.filter((o) => o !== a.owner),
      );
    }
  }
  takeNext(step: WaitStep): string | undefined {
    const turn = this.turn.get(step) ?? [];
    const owner = turn.shift();
    if (owner === undefined) return undefined;
    const list = this.q.get(step)!.get(owner)!;
    const id = list.shift()!;
    this.at.delete(id);
    if (list.length === 0) this.q.get(step)!.delete(owner);
    else turn.push(owner);
    return id;
  }
  count(step: WaitStep): number {
    return [...(this.q.get(step)?.values() ?? [])].reduce((n, l) => n + l.length, 0);
  }
}

describe('compact wait queues (stale entries)', () => {
  const STEPS: WaitStep[] = ['ACCEPT', 'PREPARING', 'SUBMIT', 'FINISHING'];

  it('random waits, unwaits, position changes and hand-outs match the plain model exactly', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom('wait', 'unwait', 'take', 'set', 'end'),
            fc.integer({ min: 0, max: 5 }),
            fc.constantFrom(...STEPS),
          ),
          { minLength: 50, maxLength: 400 },
        ),
        (ops) => {
          const s = new Slots(limits({}));
          const m = new QueueModel();
          const ownerOf = (i: number): string => `o${i % 3}`;
          for (const [op, i, step] of ops) {
            const id = `j${i}`;
            if (op === 'wait') {
              s.wait(step, id, ownerOf(i));
              m.wait(step, id, ownerOf(i));
            } else if (op === 'unwait') {
              s.unwait(id);
              m.unwait(id);
            } else if (op === 'take') assert.equal(s.takeNext(step), m.takeNext(step));
            else s.set(id, ownerOf(i), op === 'set' ? 'PENDING:PREPARING' : undefined);
            for (const st of STEPS) assert.equal(s.waitingCount(st), m.count(st));
          }
          for (const st of STEPS)
            for (let id = m.takeNext(st); id !== undefined; id = m.takeNext(st)) {
              assert.equal(s.takeNext(st), id);
            }
          for (const st of STEPS) assert.equal(s.takeNext(st), undefined);
          assert.equal(s.staleCounts, 0, 'emptied queues keep no stale-entry count');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a job that leaves and re-enters the same queue is handed out once, in its new turn', () => {
    const s = new Slots(limits({}));
    for (const id of ['a', 'b', 'c']) s.wait('SUBMIT', id, 'u');
    s.unwait('a');
    s.wait('SUBMIT', 'a', 'u');
    assert.deepEqual([s.takeNext('SUBMIT'), s.takeNext('SUBMIT'), s.takeNext('SUBMIT')], ['b', 'c', 'a']);
    assert.equal(s.takeNext('SUBMIT'), undefined);
    assert.equal(s.waitingCount('SUBMIT'), 0);
  });

  it('50,000 jobs leaving out of turn: the rest are handed out in order and nothing stays behind', () => {
    const s = new Slots(limits({}));
    for (let i = 0; i < 60_000; i++) {
      s.set(`j${i}`, 'u', 'PENDING:PREPARING');
      s.wait('SUBMIT', `j${i}`, 'u');
    }
    // Every job but each sixth leaves (killed while waiting), then some wait again: the
    // compaction runs on the way and must keep exactly the live entries.
    for (let i = 0; i < 60_000; i++) if (i % 6 !== 0) s.unwait(`j${i}`);
    for (let i = 1; i < 60_000; i += 600) s.wait('SUBMIT', `j${i}`, 'u');
    const expected = [
      ...Array.from({ length: 10_000 }, (_, k) => `j${k * 6}`),
      ...Array.from({ length: 100 }, (_, k) => `j${1 + k * 600}`),
    ];
    assert.equal(s.waitingCount('SUBMIT'), expected.length);
    const got: string[] = [];
    for (let id = s.takeNext('SUBMIT'); id !== undefined; id = s.takeNext('SUBMIT')) got.push(id);
    assert.deepEqual(got, expected);
    for (let i = 0; i < 60_000; i++) s.set(`j${i}`, 'u', undefined);
    assert.equal(s.tracked, 0, 'ended jobs leave no entry');
    assert.equal(s.staleCounts, 0, 'nor a stale-entry count');
  });

  it('a job that leaves and re-enters many times is handed out once, after the jobs queued before its last entry', () => {
    const s = new Slots(limits({}));
    s.wait('SUBMIT', 'x', 'u');
    for (let i = 0; i < 5; i++) {
      s.wait('SUBMIT', `b${i}`, 'u');
      s.unwait('x');
      s.wait('SUBMIT', 'x', 'u');
    }
    s.wait('SUBMIT', 'c', 'u');
    const got: string[] = [];
    for (let id = s.takeNext('SUBMIT'); id !== undefined; id = s.takeNext('SUBMIT')) got.push(id);
    assert.deepEqual(got, ['b0', 'b1', 'b2', 'b3', 'b4', 'x', 'c']);
    assert.equal(s.staleCounts, 0);
  });

  it('a job that left one step and waits for another is not handed out by its old entry', () => {
    const s = new Slots(limits({}));
    s.wait('SUBMIT', 'x', 'u');
    s.wait('SUBMIT', 'y', 'u');
    s.wait('FINISHING', 'x', 'u'); // leaves SUBMIT out of turn
    assert.equal(s.takeNext('SUBMIT'), 'y');
    assert.equal(s.takeNext('SUBMIT'), undefined);
    assert.equal(s.takeNext('FINISHING'), 'x');
    assert.equal(s.staleCounts, 0);
  });
});

describe('submissions under way (maxSubmitting, from the backend)', () => {
  it('at most maxSubmitting jobs in position SUBMIT: the rest wait; an answered submission frees a place', () => {
    const s = new Slots(limits({}), undefined, 2);
    const ids = queue(s, 'a', 5);
    assert.deepEqual(drain(s), ['a0', 'a1'], 'two handed over');
    assert.equal(s.mayEnter('SUBMIT', 'b'), false, 'a newcomer waits too');
    assert.deepEqual(s.submitting, { n: 2, limit: 2 });
    // a0 submitted (INLRMS): still counted in the batch system, no longer being submitted.
    s.set('a0', 'a', 'INLRMS');
    assert.deepEqual(drain(s), ['a2']);
    assert.equal(s.inStepCount('SUBMIT'), 3);
    // a1's submission failed (FINISHING): its place goes on too.
    s.set('a1', 'a', 'FINISHING');
    assert.deepEqual(drain(s), ['a3']);
    assert.equal(s.waitingCount('SUBMIT'), ids.length - 4);
  });

  it('the batch slots still bound: maxRunning reached holds a job even with no submission under way', () => {
    const s = new Slots(limits({ maxRunning: 2 }), undefined, 8);
    queue(s, 'a', 3);
    assert.deepEqual(drain(s), ['a0', 'a1']);
    s.set('a0', 'a', 'INLRMS');
    s.set('a1', 'a', 'INLRMS');
    assert.deepEqual(drain(s), [], 'both slots taken by jobs in the batch system');
    assert.deepEqual(s.submitting, { n: 0, limit: 8 });
  });

  it('no bound (0, a backend that does not say): every waiting job may be handed over', () => {
    const s = new Slots(limits({}));
    queue(s, 'a', 20);
    assert.equal(drain(s).length, 20);
    assert.deepEqual(s.submitting, { n: 20, limit: 0 });
  });
});
