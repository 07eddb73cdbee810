import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { JobEvents } from '../../src/store/job-events.js';
import { EventFeed, type FeedItem, type Follower } from '../../src/jobs/event-feed.js';
import { newJobRow } from '../helpers/new-job.js';
import { until } from '../helpers/poll.js';

/** The real event reader, counting its reads of everyone's new events (the feed's live read). */
class CountingEvents extends JobEvents {
  reads = 0;
  /** Looks at the newest number (each safety-net tick makes one). */
  looks = 0;
  override latest() {
    this.looks++;
    return super.latest();
  }
  override allAfter(seq: number, limit: number) {
    this.reads++;
    return super.allAfter(seq, limit);
  }
}

function fixture(
  t: { after: (fn: () => void) => void },
  o: { maxBuffered?: number; page?: number; replayStallMs?: number; fallbackPollMs?: number } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-feed-'));
  const file = join(dir, 'db');
  const db = openDatabase(file);
  const store = new JobStore(db);
  const events = new CountingEvents(db);
  const feed = new EventFeed(events, { pollMs: 5, ...o });
  t.after(() => {
    feed.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, events, feed, file };
}

interface Recorder extends Follower {
  items: FeedItem[];
  ended?: string;
  backlog: number;
}

function recorder(owner: string): Recorder {
  const r: Recorder = {
    owner,
    items: [],
    backlog: 0,
    send: (item) => void r.items.push(item),
    buffered: () => r.backlog,
    end: (reason) => void (r.ended = reason),
  };
  return r;
}

const seen = (r: Recorder) =>
  r.items.map((i) => (i.kind === 'state' ? `${i.event.jobId}:${i.event.state}` : `relist@${i.seq}`));

test("a follower gets its owner's live changes, in order, once, and nobody else's", async (t) => {
  const { store, feed } = fixture(t);
  const alice = recorder('alice');
  const bob = recorder('bob');
  const stopA = feed.follow(alice);
  feed.follow(bob);
  store.insertMany([newJobRow('a1', 'alice'), newJobRow('b1', 'bob')]);
  store.update(store.get('a1')!, { restState: 'PREPARING' });
  await until(() => alice.items.length >= 2, 'alice.items.length >= 2');
  await until(() => bob.items.length >= 1, 'bob.items.length >= 1');
  assert.deepEqual(seen(alice), ['a1:ACCEPTING', 'a1:PREPARING']);
  assert.deepEqual(seen(bob), ['b1:ACCEPTING']);
  assert.equal(feed.open, 2);
  stopA();
  stopA(); // twice is harmless
  assert.equal(feed.open, 1);
});

test('a resume replays exactly what came after the resume point, then goes on live, without gap or repeat', async (t) => {
  const { store, events, feed } = fixture(t, { page: 3 });
  store.insertMany(Array.from({ length: 10 }, (_, i) => newJobRow(`j${i}`, 'alice')));
  const from = events.after('alice', 0, 100)[3]!.seq;
  const r = recorder('alice');
  feed.follow(r, from);
  // Changes while the replay is under way (it pages, yielding between pages).
  store.insertMany([newJobRow('late', 'alice')]);
  await until(() => r.items.length >= 7, 'r.items.length >= 7');
  store.update(store.get('j0')!, { restState: 'PREPARING' });
  await until(() => r.items.length >= 8, 'r.items.length >= 8');
  assert.deepEqual(seen(r), [
    ...Array.from({ length: 6 }, (_, i) => `j${i + 4}:ACCEPTING`),
    'late:ACCEPTING',
    'j0:PREPARING',
  ]);
});

test('a resume point older than retention gets one relist and then the live changes', async (t) => {
  const { store, events, feed } = fixture(t);
  store.insertMany(Array.from({ length: 5 }, (_, i) => newJobRow(`j${i}`, 'alice')));
  events.prune({ maxAgeMs: 3_600_000, maxEvents: 2 });
  assert.equal(feed.check(1), 'relist');
  assert.equal(feed.check(3), 'ok');
  assert.equal(feed.check(5), 'ok');
  assert.equal(feed.check(6), 'future');
  assert.equal(feed.check(Number.MAX_SAFE_INTEGER), 'future');
  const r = recorder('alice');
  feed.follow(r, 1);
  store.update(store.get('j0')!, { restState: 'PREPARING' });
  await until(() => r.items.length >= 2, 'r.items.length >= 2');
  assert.deepEqual(seen(r), ['relist@5', 'j0:PREPARING']);
});

test('a reader past its buffer bound is ended with a reason, unsubscribed, and can resume from its last id', async (t) => {
  const { store, feed } = fixture(t, { maxBuffered: 100 });
  const r = recorder('alice');
  feed.follow(r);
  store.insertMany([newJobRow('j1', 'alice')]);
  await until(() => r.items.length === 1, 'r.items.length === 1');
  r.backlog = 101; // the client stopped reading
  store.insertMany([newJobRow('j2', 'alice'), newJobRow('j3', 'alice')]);
  await until(() => r.ended !== undefined, 'r.ended !== undefined');
  assert.equal(r.ended, 'slow-reader');
  assert.equal(feed.open, 0, 'an ended reader is no longer counted');
  assert.deepEqual(seen(r), ['j1:ACCEPTING']);
  const last = r.items[0]!.kind === 'state' ? r.items[0]!.event.seq : 0;
  const again = recorder('alice');
  feed.follow(again, last);
  await until(() => again.items.length >= 2, 'again.items.length >= 2');
  assert.deepEqual(seen(again), ['j2:ACCEPTING', 'j3:ACCEPTING']);
});

test("a replay goes at the reader's pace: it waits while half the bound is unread, and gets everything once read", async (t) => {
  const { store, feed } = fixture(t, { maxBuffered: 100, page: 4 });
  store.insertMany(Array.from({ length: 30 }, (_, i) => newJobRow(`p${i}`, 'alice')));
  const r = recorder('alice');
  // Each event handed over counts 20 bytes until the reader "writes it out".
  r.send = (item) => {
    r.items.push(item);
    r.backlog += 20;
  };
  feed.follow(r, 0);
  await until(() => r.items.length >= 3, 'the first events');
  await new Promise((res) => setTimeout(res, 100));
  assert.equal(r.items.length, 3, 'no more than half the bound ahead of the reader');
  assert.equal(r.ended, undefined, 'a replaying reader is paced, not ended');
  const drain = setInterval(() => (r.backlog = 0), 5);
  t.after(() => clearInterval(drain));
  await until(() => r.items.length === 30, 'every event once the reader reads');
  assert.deepEqual(
    seen(r),
    Array.from({ length: 30 }, (_, i) => `p${i}:ACCEPTING`),
  );
});

test('a replaying reader that takes nothing for the stall time is ended as slow', async (t) => {
  const { store, feed } = fixture(t, { maxBuffered: 100, replayStallMs: 200 });
  store.insertMany(Array.from({ length: 10 }, (_, i) => newJobRow(`s${i}`, 'alice')));
  const r = recorder('alice');
  r.backlog = 1000; // never reads
  feed.follow(r, 0);
  await until(() => r.ended !== undefined, 'the stalled reader to be ended', 10_000);
  assert.equal(r.ended, 'slow-reader');
  assert.equal(feed.open, 0);
});

test('followers that go away leave nothing behind: the count returns to 0 and polling stops', async (t) => {
  const { store, feed } = fixture(t);
  const stops = Array.from({ length: 200 }, (_, i) => feed.follow(recorder(`u${i % 7}`)));
  assert.equal(feed.open, 200);
  store.insertMany([newJobRow('x', 'u3')]);
  for (const s of stops) s();
  assert.equal(feed.open, 0);
  // A follower added afterwards starts from the newest event, not from what it missed.
  const r = recorder('u3');
  feed.follow(r);
  store.insertMany([newJobRow('y', 'u3')]);
  await until(() => r.items.length >= 1, 'r.items.length >= 1');
  assert.deepEqual(seen(r), ['y:ACCEPTING']);
});

test('an event both replayed and then polled is handed over once', async (t) => {
  const { store, events, feed } = fixture(t);
  const live = recorder('alice');
  feed.follow(live); // the poll starts here, its cursor at the newest event
  const from = events.latest();
  store.insertMany([newJobRow('j1', 'alice'), newJobRow('j2', 'alice')]);
  // In the same turn, before any poll: the replay reads j1 and j2, and so will the poll.
  const r = recorder('alice');
  feed.follow(r, from);
  await until(() => live.items.length >= 2, 'the poll delivered');
  store.insertMany([newJobRow('j3', 'alice')]);
  await until(() => live.items.length >= 3, 'the next change delivered');
  assert.deepEqual(seen(r), ['j1:ACCEPTING', 'j2:ACCEPTING', 'j3:ACCEPTING']);
});

// The feed is woken by the job store's writes (src/store/event-signal.ts): a quiet service
// with streams open does no reads (it read the table every 5 ms before: docs/performance.md).

test('a quiet feed with followers open reads nothing: no timer-driven reads between changes', async (t) => {
  const { store, events, feed } = fixture(t, { fallbackPollMs: 3_600_000 });
  const r = recorder('alice');
  feed.follow(r);
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(events.reads, 0, 'no change, no read');
  store.insertMany([newJobRow('q1', 'alice')]);
  await until(() => r.items.length >= 1, 'the change delivered through the wake-up');
  const after = events.reads;
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(events.reads, after, 'quiet again: no more reads');
  assert.deepEqual(seen(r), ['q1:ACCEPTING']);
});

test('the changes of one window are read together: many writes, one read', async (t) => {
  const { store, events, feed } = fixture(t, { fallbackPollMs: 3_600_000 });
  const r = recorder('alice');
  feed.follow(r);
  store.insertMany([newJobRow('w0', 'alice')]);
  for (let i = 1; i <= 50; i++) store.insertMany([newJobRow(`w${i}`, 'alice')]);
  await until(() => r.items.length >= 51, 'all 51 delivered');
  assert.equal(events.reads, 1);
});

test('a write that changes no REST state wakes nothing; one that changes it does', async (t) => {
  const { store, events, feed } = fixture(t, { fallbackPollMs: 3_600_000 });
  store.insertMany([newJobRow('n1', 'alice')]);
  const r = recorder('alice');
  feed.follow(r);
  store.update(store.get('n1')!, { lrmsState: 'R' });
  await new Promise((res) => setTimeout(res, 100));
  assert.equal(events.reads, 0);
  store.update(store.get('n1')!, { restState: 'RUNNING' });
  await until(() => r.items.length >= 1, 'the change delivered');
  assert.deepEqual(seen(r), ['n1:RUNNING']);
});

test('after the last follower leaves, writes schedule no reads', async (t) => {
  const { store, events, feed } = fixture(t, { fallbackPollMs: 3_600_000 });
  const stop = feed.follow(recorder('alice'));
  stop();
  for (let i = 0; i < 5; i++) store.insertMany([newJobRow(`g${i}`, 'alice')]);
  await new Promise((res) => setTimeout(res, 100));
  assert.equal(events.reads, 0);
});

test('a change written by another connection (no signal) is still read by the safety-net poll', async (t) => {
  const { events, feed, file } = fixture(t, { fallbackPollMs: 20 });
  const r = recorder('alice');
  feed.follow(r);
  const other = openDatabase(file);
  t.after(() => other.close());
  new JobStore(other).insertMany([newJobRow('o1', 'alice')]);
  await until(() => r.items.length >= 1, 'the change read by the safety-net poll');
  assert.deepEqual(seen(r), ['o1:ACCEPTING']);
  assert.ok(events.reads >= 1);
});

test('a quiet safety-net poll reads no events: it looks at the newest number only', async (t) => {
  const { events, feed, file } = fixture(t, { fallbackPollMs: 5 });
  const r = recorder('alice');
  feed.follow(r);
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(events.reads, 0, 'about 60 ticks, nothing new: no read of the events');
  const other = openDatabase(file);
  t.after(() => other.close());
  new JobStore(other).insertMany([newJobRow('s1', 'alice')]);
  await until(() => r.items.length >= 1, 'the change read by the safety-net poll');
  const after = events.reads;
  await new Promise((res) => setTimeout(res, 200));
  assert.equal(events.reads, after, 'quiet again: no more reads');
});

test('a safety-net poll after events pruned unread reads once, not at every tick', async (t) => {
  const { events, feed, file } = fixture(t, { fallbackPollMs: 5 });
  feed.follow(recorder('alice'));
  const other = openDatabase(file);
  t.after(() => other.close());
  // Another connection (no signal) writes two events and prunes them in the same turn:
  // no tick runs in between, so the feed never sees them.
  new JobStore(other).insertMany([newJobRow('p1', 'alice'), newJobRow('p2', 'alice')]);
  new JobEvents(other).prune({ maxAgeMs: 0, maxEvents: 1_000_000 }, Date.now() + 60_000);
  await new Promise((res) => setTimeout(res, 300));
  assert.ok(events.reads <= 1, `${events.reads} reads in about 60 ticks`);
});

test('with only gathering followers open, the safety net ticks once per shortest period, not once per fallbackPollMs', async (t) => {
  const { events, feed, file } = fixture(t, { fallbackPollMs: 10 });
  feed.follow({ ...recorder('alice'), delayMs: 300 });
  const g: Recorder = { ...recorder('bob'), delayMs: 200 };
  g.send = (item) => void g.items.push(item);
  feed.follow(g);
  const looks0 = events.looks;
  await new Promise((res) => setTimeout(res, 650));
  const ticks = events.looks - looks0;
  // Before: one tick per 10 ms, about 65. A gathering follower takes its events a period
  // late anyway; ticking faster only wakes the service for nothing.
  assert.ok(ticks <= 4, `${ticks} safety-net ticks in 650 ms with periods of 200 and 300 ms`);
  // A change no signal carried still arrives, within the period and the gathering.
  const other = openDatabase(file);
  t.after(() => other.close());
  const t0 = Date.now();
  new JobStore(other).insertMany([newJobRow('q1', 'bob')]);
  await until(() => g.items.length >= 1, 'the change read by the safety-net poll');
  assert.ok(Date.now() - t0 < 1500, 'read within about a period');
  // An unbatched follower wants its events at once: the net ticks at fallbackPollMs again.
  const u = feed.follow(recorder('carol'));
  const looks1 = events.looks;
  await new Promise((res) => setTimeout(res, 300));
  // About 30 (at most 2 at the gathering period): a loaded machine delays timers, not by 6x.
  assert.ok(events.looks - looks1 >= 5, `${events.looks - looks1} ticks in 300 ms with an unbatched follower`);
  u();
  const looks2 = events.looks;
  await new Promise((res) => setTimeout(res, 300));
  assert.ok(events.looks - looks2 <= 3, `${events.looks - looks2} ticks in 300 ms once it left`);
});

// A follower that gathers (the stream's batch=) takes its events up to delayMs after the
// change: the feed reads once per such period, not once per change.

test('with only gathering followers open, changes a little apart are read together, once per period', async (t) => {
  const { store, events, feed } = fixture(t, { fallbackPollMs: 3_600_000 });
  const r: Recorder = { ...recorder('alice'), delayMs: 400 };
  r.send = (item) => void r.items.push(item);
  feed.follow(r);
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) {
    store.insertMany([newJobRow(`d${i}`, 'alice')]);
    await new Promise((res) => setTimeout(res, 30));
  }
  await until(() => r.items.length >= 5, 'all five delivered');
  assert.equal(events.reads, 1, 'one read for the five changes');
  assert.ok(Date.now() - t0 >= 350, 'read at the end of the period');
  assert.deepEqual(seen(r), ['d0:ACCEPTING', 'd1:ACCEPTING', 'd2:ACCEPTING', 'd3:ACCEPTING', 'd4:ACCEPTING']);
});

test('a follower that wants its events at once brings a gathering wake forward', async (t) => {
  const { store, feed } = fixture(t, { fallbackPollMs: 3_600_000 });
  const slow: Recorder = { ...recorder('alice'), delayMs: 3_600_000 };
  slow.send = (item) => void slow.items.push(item);
  feed.follow(slow);
  store.insertMany([newJobRow('f1', 'alice')]); // a wake set an hour ahead
  const now = recorder('alice');
  feed.follow(now, 0);
  store.insertMany([newJobRow('f2', 'alice')]);
  await until(() => slow.items.length >= 2, 'the gathering follower has both, read with the other');
  assert.deepEqual(seen(slow), ['f1:ACCEPTING', 'f2:ACCEPTING']);
  await until(() => now.items.length >= 2, 'the other too');
});

// Filters kept by the feed: followers naming their jobs are found by the event's job id.

test("a follower naming jobs gets only those, and never another owner's job of a name it gives", async (t) => {
  const { store, feed } = fixture(t);
  store.insertMany([newJobRow('a1', 'alice'), newJobRow('a2', 'alice'), newJobRow('b1', 'bob')]);
  const mine = { ...recorder('alice'), ids: new Set(['a2', 'b1']) };
  const all = recorder('alice');
  feed.follow(mine);
  feed.follow(all);
  for (const id of ['a1', 'a2', 'b1']) store.update(store.get(id)!, { restState: 'RUNNING' });
  await until(() => all.items.length >= 2, "alice's two changes");
  store.update(store.get('a2')!, { restState: 'FINISHED' });
  await until(() => mine.items.length >= 2, 'the named job ended');
  assert.deepEqual(seen(mine), ['a2:RUNNING', 'a2:FINISHED']);
  assert.deepEqual(seen(all), ['a1:RUNNING', 'a2:RUNNING', 'a2:FINISHED']);
});

test('a state filter passes only events into those states, live and in a replay', async (t) => {
  const { store, events, feed } = fixture(t, { page: 2 });
  const from = events.latest();
  store.insertMany([newJobRow('s1', 'alice'), newJobRow('s2', 'alice')]);
  for (const id of ['s1', 's2']) store.update(store.get(id)!, { restState: 'RUNNING' });
  store.update(store.get('s1')!, { restState: 'FINISHED' });
  // A replay of five events, two per page, of which one passes: it pages past the others.
  const r = { ...recorder('alice'), states: new Set(['FINISHED']) };
  feed.follow(r, from);
  store.update(store.get('s2')!, { restState: 'FINISHED' });
  await until(() => r.items.length >= 2, 'both ends');
  assert.deepEqual(seen(r), ['s1:FINISHED', 's2:FINISHED']);
});

test('an empty id filter gets nothing; followers by id leave nothing behind when they go', async (t) => {
  const { store, feed } = fixture(t);
  store.insertMany([newJobRow('e1', 'alice')]);
  const none = { ...recorder('alice'), ids: new Set<string>() };
  const stops = Array.from({ length: 50 }, (_, i) =>
    feed.follow({ ...recorder('alice'), ids: new Set(['e1', `x${i}`]) }),
  );
  feed.follow(none);
  const all = recorder('alice');
  feed.follow(all);
  store.update(store.get('e1')!, { restState: 'RUNNING' });
  await until(() => all.items.length >= 1, 'the change');
  for (const s of stops) s();
  assert.equal(feed.open, 2);
  assert.deepEqual(seen(none), []);
});

test("a gathering follower's read past half its bound goes on at the reader's pace, not ended as slow", async (t) => {
  const { store, feed } = fixture(t, { fallbackPollMs: 3_600_000, maxBuffered: 1000, replayStallMs: 60_000 });
  const r: Recorder = { ...recorder('alice'), delayMs: 100 };
  // Each item adds 100 bytes to the backlog; the reader takes everything every 20 ms.
  r.send = (item) => {
    r.items.push(item);
    r.backlog += 100;
  };
  r.buffered = () => r.backlog;
  r.end = (reason) => void (r.ended = reason);
  const reader = setInterval(() => (r.backlog = 0), 20);
  t.after(() => clearInterval(reader));
  feed.follow(r);
  store.insertMany(Array.from({ length: 60 }, (_, i) => newJobRow(`b${i}`, 'alice')));
  await until(() => r.items.length >= 60 || r.ended !== undefined, 'all 60 delivered');
  assert.equal(r.ended, undefined, 'not ended');
  assert.deepEqual(
    seen(r),
    Array.from({ length: 60 }, (_, i) => `b${i}:ACCEPTING`),
  );
  store.insertMany([newJobRow('after', 'alice')]);
  await until(() => r.items.length >= 61, 'and live again');
  assert.equal(feed.open, 1);
});
