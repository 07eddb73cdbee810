import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, durably, type Db } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { JobEvents } from '../../src/store/job-events.js';
import { newJobRow } from '../helpers/new-job.js';

interface Fixture {
  db: Db;
  store: JobStore;
  events: JobEvents;
  reopen(): void;
}

function withDb(t: { after: (fn: () => void) => void }): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-events-'));
  const file = join(dir, 'db');
  const f = { db: openDatabase(file) } as Fixture;
  f.store = new JobStore(f.db);
  f.events = new JobEvents(f.db);
  f.reopen = () => {
    f.db.close();
    f.db = openDatabase(file);
    f.store = new JobStore(f.db);
    f.events = new JobEvents(f.db);
  };
  t.after(() => {
    f.db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return f;
}

const DAY = 24 * 3600 * 1000;
const states = (f: Fixture, owner: string) =>
  f.events.after(owner, 0, 1000).map((e) => [e.jobId, e.previousState, e.state]);

test('a submission and each change of the REST state is one event, in order, with the previous state', (t) => {
  const f = withDb(t);
  f.store.insertMany([newJobRow('j1', 'alice')]);
  const r = f.store.update(f.store.get('j1')!, { state: 'PREPARING', restState: 'PREPARING' }, 1000)!;
  f.store.update(r, { state: 'SUBMIT', restState: 'SUBMITTING' }, 2000);
  assert.deepEqual(states(f, 'alice'), [
    ['j1', null, 'ACCEPTING'],
    ['j1', 'ACCEPTING', 'PREPARING'],
    ['j1', 'PREPARING', 'SUBMITTING'],
  ]);
  const evs = f.events.after('alice', 0, 10);
  assert.deepEqual(
    evs.map((e) => e.at).slice(1),
    [1000, 2000],
    'the time of the change is the time the transition was stored',
  );
  assert.ok(evs[0]!.seq < evs[1]!.seq && evs[1]!.seq < evs[2]!.seq);
  assert.equal(f.events.latest(), evs[2]!.seq);
});

test('a change that keeps the REST state, or names it unchanged, makes no event', (t) => {
  const f = withDb(t);
  f.store.insertMany([newJobRow('j1', 'alice')]);
  let r = f.store.get('j1')!;
  r = f.store.update(r, { lrmsState: 'R' })!;
  r = f.store.update(r, { restState: 'ACCEPTING', state: 'ACCEPTED' })!;
  f.store.swapSessionIdent('j1', r.sessionIdent ?? '', 'x');
  assert.equal(f.events.after('alice', 0, 10).length, 1);
});

test('exit code and failure reason are shown for an ended state only', (t) => {
  const f = withDb(t);
  f.store.insertMany([newJobRow('j1', 'alice'), newJobRow('j2', 'alice')]);
  // A failure reason set while the job still runs (a rerun's) is not an end.
  const r1 = f.store.update(f.store.get('j1')!, { restState: 'RUNNING', failureReason: 'earlier', exitCode: 3 })!;
  f.store.update(r1, { restState: 'FAILED', failureReason: 'node died', exitCode: 137 });
  f.store.update(f.store.get('j2')!, { restState: 'FINISHED', exitCode: 0 });
  const evs = f.events.after('alice', 0, 10);
  const running = evs.find((e) => e.state === 'RUNNING')!;
  assert.equal(running.exitCode, undefined);
  assert.equal(running.failureReason, undefined);
  const failed = evs.find((e) => e.state === 'FAILED')!;
  assert.equal(failed.exitCode, 137);
  assert.equal(failed.failureReason, 'node died');
  const finished = evs.find((e) => e.state === 'FINISHED')!;
  assert.equal(finished.exitCode, 0);
  assert.equal('failureReason' in finished, false);
});

test("an owner's read holds only that owner's events, after the given point", (t) => {
  const f = withDb(t);
  f.store.insertMany([newJobRow('a1', 'alice'), newJobRow('b1', 'bob'), newJobRow('a2', 'alice')]);
  assert.deepEqual(
    f.events.after('alice', 0, 10).map((e) => e.jobId),
    ['a1', 'a2'],
  );
  assert.deepEqual(
    f.events.after('bob', 0, 10).map((e) => e.jobId),
    ['b1'],
  );
  const first = f.events.after('alice', 0, 1)[0]!;
  assert.deepEqual(
    f.events.after('alice', first.seq, 10).map((e) => e.jobId),
    ['a2'],
  );
  assert.deepEqual(f.events.after('nobody', 0, 10), []);
  assert.equal(f.events.allAfter(0, 10).length, 3);
});

test('a transition that does not commit leaves no event (same transaction)', (t) => {
  const f = withDb(t);
  f.store.insertMany([newJobRow('j1', 'alice')]);
  const r = f.store.get('j1')!;
  const before = f.events.latest();
  // A compare-and-set that loses: neither the row nor an event changes.
  assert.equal(f.store.update({ id: 'j1', version: r.version + 5 }, { restState: 'RUNNING' }), undefined);
  assert.equal(f.events.latest(), before);
  // A transaction rolled back after the change: its event goes with it.
  assert.throws(() =>
    durably(f.db, () => {
      f.db.prepare("UPDATE jobs SET rest_state = 'KILLED' WHERE id = 'j1'").run();
      throw new Error('crash between the change and the commit');
    }),
  );
  assert.equal(f.store.get('j1')!.restState, 'ACCEPTING');
  assert.deepEqual(states(f, 'alice'), [['j1', null, 'ACCEPTING']]);
  // A submission that fails as a whole stores no event either (the duplicate id).
  assert.throws(() => f.store.insertMany([newJobRow('j2', 'alice'), newJobRow('j1', 'alice')]));
  assert.deepEqual(states(f, 'alice'), [['j1', null, 'ACCEPTING']]);
  // The next committed change takes the next number: no gap from the rollbacks.
  f.store.update(r, { restState: 'PREPARING' });
  assert.equal(f.events.latest(), before + 1);
});

test('the sequence is kept across a reopen and never reuses a pruned number', (t) => {
  const f = withDb(t);
  f.store.insertMany([newJobRow('j1', 'alice'), newJobRow('j2', 'alice')]);
  const last = f.events.latest();
  assert.equal(last, 2);
  // Everything pruned (older than the age bound): the numbers are not given out again.
  assert.equal(f.events.prune({ maxAgeMs: 1, maxEvents: 1000 }, Date.now() + DAY), 2);
  assert.deepEqual(f.events.after('alice', 0, 10), []);
  assert.equal(f.events.prunedThrough(), 2);
  f.reopen();
  assert.equal(f.events.latest(), 2);
  assert.equal(f.events.prunedThrough(), 2);
  f.store.insertMany([newJobRow('j3', 'alice')]);
  assert.deepEqual(
    f.events.after('alice', 0, 10).map((e) => [e.seq, e.jobId]),
    [[3, 'j3']],
  );
});

test('retention: the older events go first, by age and by count, and prunedThrough says up to where', (t) => {
  const f = withDb(t);
  const now = Date.now();
  f.store.insertMany([newJobRow('old', 'alice', { createdAt: now - 3 * DAY })]);
  f.store.insertMany(Array.from({ length: 30 }, (_, i) => newJobRow(`n${i}`, 'alice', { createdAt: now })));
  assert.equal(f.events.prunedThrough(), 0);
  assert.equal(f.events.prune({ maxAgeMs: 2 * DAY, maxEvents: 100 }, now), 1, 'the one older than two days');
  assert.equal(f.events.prunedThrough(), 1);
  assert.equal(f.events.prune({ maxAgeMs: 2 * DAY, maxEvents: 100 }, now), 0, 'nothing more to prune');
  assert.equal(f.events.prune({ maxAgeMs: 2 * DAY, maxEvents: 10 }, now), 20, 'down to the newest ten');
  assert.equal(f.events.prunedThrough(), 21);
  assert.deepEqual(
    f.events.after('alice', 0, 100).map((e) => e.seq),
    Array.from({ length: 10 }, (_, i) => 22 + i),
  );
});

test('a prune of many events goes in bounded slices and resumes on the next call', (t) => {
  const f = withDb(t);
  const now = Date.now();
  f.store.insertMany(Array.from({ length: 12_000 }, (_, i) => newJobRow(`j${i}`, 'alice', { createdAt: now - DAY })));
  assert.equal(f.events.prune({ maxAgeMs: 1000, maxEvents: 1_000_000 }, now, 1), 10_000);
  assert.equal(f.events.prunedThrough(), 10_000);
  assert.equal(f.events.prune({ maxAgeMs: 1000, maxEvents: 1_000_000 }, now, 1), 2000);
  assert.equal(f.events.prunedThrough(), 12_000);
});
