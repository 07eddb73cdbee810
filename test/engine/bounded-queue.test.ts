// The scheduler's one queue type (src/engine/scheduler/id-queue.ts): ids waiting for one of
// a bounded number of turns. No bound may silently drop a job: a full queue makes ids wait,
// every id queued runs exactly once and in order, and the ways out of a turn (drop, close,
// a run that throws, a turn given back twice) neither lose nor duplicate an id.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedQueue, IdQueue } from '../../src/engine/scheduler/id-queue.js';

/** A queue whose runs are held until the test ends them; records what ran, with which value. */
function held<V = true>(limit: number, o: { pumpOnFree?: boolean } = {}) {
  const ran: { id: string; value: V }[] = [];
  const open = new Map<string, () => void>();
  let most = 0;
  const q: BoundedQueue<V> = new BoundedQueue<V>({
    limit,
    run: (id, value, done) => {
      ran.push({ id, value });
      assert.ok(!open.has(id), `${id} runs twice at once`);
      open.set(id, done);
      most = Math.max(most, q.running);
    },
    freed: () => {
      if (o.pumpOnFree !== false) q.pump();
    },
  });
  return {
    q,
    ran,
    ids: () => ran.map((r) => r.id),
    /** Ends the run of `id` (or the oldest one under way). */
    end(id?: string): void {
      const key = id ?? open.keys().next().value;
      assert.ok(key !== undefined, 'no run under way');
      const done = open.get(key);
      assert.ok(done, `${key} is not running`);
      open.delete(key);
      done();
    },
    get open(): number {
      return open.size;
    },
    /** The ids whose runs are under way, oldest first. */
    running: (): string[] => [...open.keys()],
    get most(): number {
      return most;
    },
  };
}

const range = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('bounded queue: bounds and order', () => {
  it('runs at most `limit` at once; a freed turn goes to the next id in order', () => {
    const h = held(3);
    for (const id of range('a', 10)) assert.equal(h.q.push(id, true), true);
    h.q.pump();
    assert.deepEqual(h.ids(), ['a0', 'a1', 'a2']);
    assert.equal(h.q.running, 3);
    assert.equal(h.q.waiting, 7);
    assert.equal(h.q.idle, false);
    h.end('a1');
    assert.deepEqual(h.ids(), ['a0', 'a1', 'a2', 'a3']);
    while (h.open > 0) h.end();
    assert.deepEqual(h.ids(), range('a', 10));
    assert.equal(h.most, 3);
    assert.equal(h.q.running, 0);
    assert.equal(h.q.waiting, 0);
    assert.equal(h.q.idle, true);
  });

  it('10,000 ids queued while full, ended in a scrambled order: each runs exactly once, in the order queued', () => {
    const h = held(64);
    const ids = range('f', 10_000);
    h.q.pump(); // nothing queued: nothing runs
    assert.equal(h.ran.length, 0);
    for (const id of ids.slice(0, 5000)) h.q.push(id, true);
    h.q.pump();
    for (const id of ids.slice(5000)) h.q.push(id, true); // while every turn is taken
    assert.equal(h.q.waiting, 10_000 - 64);
    let turn = 0;
    while (h.open > 0) {
      // End the newest, the oldest, or one in the middle, by turns.
      const running = h.running();
      h.end(running[(turn++ * 7) % running.length]);
      assert.ok(h.q.running <= 64);
    }
    assert.deepEqual(h.ids(), ids, 'started in the order queued, none lost, none twice');
    assert.equal(h.most, 64);
    assert.equal(h.q.waiting, 0);
  });

  it('a run that ends at once (inside `run`) lets the same pump go on, without a pump inside the pump', () => {
    const ran: string[] = [];
    let depth = 0;
    let deepest = 0;
    const q: BoundedQueue = new BoundedQueue({
      limit: 2,
      run: (id, _v, done) => {
        ran.push(id);
        done();
      },
      freed: () => {
        depth++;
        deepest = Math.max(deepest, depth);
        q.pump();
        depth--;
      },
    });
    for (const id of range('s', 1000)) q.push(id, true);
    q.pump();
    assert.deepEqual(ran, range('s', 1000));
    assert.equal(q.running, 0);
    assert.equal(deepest, 1, 'the nested pump returned at once');
  });

  it('`idle` says whether a run may start without passing anyone; `enter` counts a run started out of turn', () => {
    const h = held(1);
    assert.equal(h.q.idle, true);
    const release = h.q.enter(); // the caller starts a run itself
    assert.equal(h.q.idle, false);
    h.q.push('w', true);
    h.q.pump();
    assert.deepEqual(h.ids(), [], 'the queued id waits for the counted run');
    release();
    assert.deepEqual(h.ids(), ['w']);
    // Out of turn past the limit (an aborted run that ends at once): counted, and given back once.
    const extra = h.q.enter();
    assert.equal(h.q.running, 2);
    extra();
    extra();
    assert.equal(h.q.running, 1);
  });
});

describe('bounded queue: ids waiting twice, dropped or queued again', () => {
  it('an id queued while it waits keeps its place and runs once, with the value last given', () => {
    const h = held<string>(1);
    h.q.push('x', 'busy');
    h.q.pump();
    assert.equal(h.q.push('a', 'first'), true);
    assert.equal(h.q.push('b', 'only'), true);
    assert.equal(h.q.push('a', 'second'), false, 'a waits already');
    assert.equal(h.q.waiting, 2);
    h.end('x');
    h.end('a');
    h.end('b');
    assert.deepEqual(h.ran, [
      { id: 'x', value: 'busy' },
      { id: 'a', value: 'second' },
      { id: 'b', value: 'only' },
    ]);
  });

  it('a dropped id does not run for that wait; its value comes back; dropping what does not wait gives nothing', () => {
    const h = held<string>(1);
    h.q.push('x', 'busy');
    h.q.pump();
    h.q.push('k', 'stage-out');
    h.q.push('n', 'next');
    assert.equal(h.q.has('k'), true);
    assert.equal(h.q.drop('k'), 'stage-out');
    assert.equal(h.q.has('k'), false);
    assert.equal(h.q.drop('k'), undefined, 'dropped already');
    assert.equal(h.q.drop('never'), undefined);
    assert.equal(h.q.waiting, 1);
    h.end('x');
    h.end('n');
    assert.deepEqual(h.ids(), ['x', 'n']);
    assert.equal(h.q.idle, true, 'the skipped entry is gone from the order');
  });

  it('an id dropped and queued again runs once for the new wait, not twice', () => {
    const h = held(1);
    h.q.push('x', true);
    h.q.pump();
    h.q.push('a', true);
    h.q.push('b', true);
    h.q.drop('a');
    assert.equal(h.q.push('a', true), true, 'a new wait');
    h.q.push('c', true);
    while (h.open > 0) h.end();
    assert.deepEqual(
      h.ids().filter((id) => id === 'a'),
      ['a'],
    );
    assert.deepEqual([...h.ids()].sort(), ['a', 'b', 'c', 'x']);
    assert.equal(h.q.waiting, 0);
  });

  it('an id queued again after its run started waits and runs again (a new wait is a new turn)', () => {
    const h = held(1);
    h.q.push('p', true);
    h.q.pump();
    assert.equal(h.q.push('p', true), true, 'poked again while its look runs');
    h.end('p');
    assert.deepEqual(h.ids(), ['p', 'p']);
    h.end('p');
    assert.equal(h.q.running, 0);
  });
});

describe('bounded queue: failures', () => {
  it('a limit below 1 is refused: a queue that can never run would hold its ids for ever', () => {
    for (const limit of [0, -1, Number.NaN]) {
      assert.throws(
        () => new BoundedQueue({ limit, run: () => undefined, freed: () => undefined }),
        (e: unknown) => e instanceof RangeError && /limit of 1 or more/.test(e.message),
      );
    }
  });

  it('a turn given back twice counts once: the bound is not overrun', () => {
    const h = held(2, { pumpOnFree: false });
    for (const id of range('d', 5)) h.q.push(id, true);
    h.q.pump();
    const done = h.q.enter(); // a third run counted out of turn
    done();
    done();
    done();
    assert.equal(h.q.running, 2);
    h.q.pump();
    assert.equal(h.q.running, 2, 'still at the limit: no extra run started');
    assert.deepEqual(h.ids(), ['d0', 'd1']);
  });

  it('a run that throws gives its turn back; the error reaches the caller; the others still run once each', () => {
    const ran: string[] = [];
    const q = new BoundedQueue({
      limit: 1,
      run: (id, _v, done) => {
        ran.push(id);
        if (id === 'bad') throw new Error('run failed');
        done();
      },
      freed: () => undefined,
    });
    for (const id of ['a', 'bad', 'b', 'c']) q.push(id, true);
    assert.throws(() => q.pump(), /run failed/);
    assert.equal(q.running, 0, 'the failed run holds no turn');
    q.pump();
    assert.deepEqual(ran, ['a', 'bad', 'b', 'c']);
    assert.equal(q.waiting, 0);
  });

  it('after close nothing starts, and what waits is still counted; clear forgets it', () => {
    const h = held(2);
    for (const id of range('c', 4)) h.q.push(id, true);
    h.q.pump();
    h.q.close();
    h.end('c0');
    h.q.pump();
    assert.deepEqual(h.ids(), ['c0', 'c1'], 'no run after close');
    assert.equal(h.q.waiting, 2);
    h.q.clear();
    assert.equal(h.q.waiting, 0);
    assert.equal(h.q.has('c2'), false);
  });
});

describe('id queue', () => {
  it('hands out ids in order across its compactions, and is empty after a clear', () => {
    const q = new IdQueue();
    const ids = range('i', 20_000);
    for (const id of ids.slice(0, 12_000)) q.push(id);
    const out: string[] = [];
    for (let i = 0; i < 9000; i++) out.push(q.shift()!);
    for (const id of ids.slice(12_000)) q.push(id);
    for (let id = q.shift(); id !== undefined; id = q.shift()) out.push(id);
    assert.deepEqual(out, ids);
    assert.equal(q.size, 0);
    q.push('z');
    q.clear();
    assert.equal(q.size, 0);
    assert.equal(q.shift(), undefined);
  });
});
