import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import { newJobRow } from '../helpers/new-job.js';

function job(id: string, owner: string, restState = 'ACCEPTING'): NewJob {
  return newJobRow(id, owner, { restState, queue: 'main', createdAt: 1 });
}

function withDb(t: { after: (fn: () => void) => void }): { db: Db; store: JobStore; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-store-'));
  const file = join(dir, 'db');
  const db = openDatabase(file);
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, store: new JobStore(db), file };
}

const statesOf = (store: JobStore, ids: readonly string[], owner: string) =>
  ids.map((id) => store.restStateOwned(id, owner));

/** What the table says, to compare the in-memory index against. */
function fromTable(db: Db, id: string, owner: string): string | undefined {
  return (
    (db.prepare('SELECT rest_state FROM jobs WHERE id = ? AND owner = ?').pluck().get(id, owner) as
      string | undefined) ?? undefined
  );
}

test("restStateOwned: only the owner's existing jobs, whatever the ids contain", (t) => {
  const { store } = withDb(t);
  const odd = ['a"b', 'back\\slash', 'ünï', 'with space', '[1]', "it's", '__proto__', 'constructor'];
  store.insertMany([
    job('j1', 'alice'),
    job('j2', 'alice', 'FINISHED'),
    job('j3', 'bob'),
    ...odd.map((id) => job(id, 'alice', 'RUNNING')),
  ]);
  assert.deepEqual(statesOf(store, ['j1', 'j2', 'j3', 'nosuch', 'j1', ''], 'alice'), [
    'ACCEPTING',
    'FINISHED',
    undefined,
    undefined,
    'ACCEPTING',
    undefined,
  ]);
  assert.deepEqual(
    statesOf(store, odd, 'alice'),
    odd.map(() => 'RUNNING'),
  );
  assert.deepEqual(statesOf(store, ['j1', 'j2', 'toString', 'hasOwnProperty'], 'bob'), [
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  assert.equal(store.restStateOwned('j3', 'bob'), 'ACCEPTING');
});

test('restStateOwned: an owner that differs only in case or spacing owns nothing', (t) => {
  const { store } = withDb(t);
  store.insertMany([job('j1', '/DC=org/CN=Alice')]);
  assert.equal(store.restStateOwned('j1', '/DC=org/CN=alice'), undefined);
  assert.equal(store.restStateOwned('j1', '/DC=org/CN=Alice '), undefined);
  assert.equal(store.restStateOwned('j1', ''), undefined);
  assert.equal(store.restStateOwned('j1', '/DC=org/CN=Alice'), 'ACCEPTING');
});

test('restStateOwned: follows updates and deletions, 10,000 jobs', (t) => {
  const { store } = withDb(t);
  const ids = Array.from({ length: 10_000 }, (_, i) => `job${i}`);
  store.insertMany(ids.map((id) => job(id, 'alice')));
  const first = store.get('job7');
  assert.ok(first);
  assert.ok(store.update(first, { restState: 'RUNNING' }));
  const eighth = store.get('job8');
  assert.ok(eighth && store.delete(eighth));
  const got = statesOf(store, ids, 'alice');
  assert.equal(got.filter((s) => s !== undefined).length, 9_999);
  assert.equal(got[7], 'RUNNING');
  assert.equal(got[8], undefined);
  assert.equal(got[9_999], 'ACCEPTING');
});

test('restStateOwned: a failed compare-and-set or delete changes nothing', (t) => {
  const { store } = withDb(t);
  store.insertMany([job('j1', 'alice')]);
  const stale = store.get('j1');
  assert.ok(stale);
  assert.ok(store.update(stale, { restState: 'RUNNING' }));
  assert.equal(store.update(stale, { restState: 'FINISHED' }), undefined, 'stale version refused');
  assert.equal(store.restStateOwned('j1', 'alice'), 'RUNNING');
  assert.equal(store.delete(stale), false, 'stale version refused');
  assert.equal(store.restStateOwned('j1', 'alice'), 'RUNNING');
});

test('restStateOwned: a submission whose transaction fails leaves no trace', (t) => {
  const { store, db } = withDb(t);
  store.insertMany([job('j1', 'alice')]);
  // The second job clashes with the first on the primary key: the whole batch rolls back.
  assert.throws(() => store.insertMany([job('new1', 'alice'), job('j1', 'bob', 'RUNNING')]), /UNIQUE|PRIMARY/);
  assert.equal(store.restStateOwned('new1', 'alice'), undefined);
  assert.equal(fromTable(db, 'new1', 'alice'), undefined);
  assert.equal(store.restStateOwned('j1', 'bob'), undefined);
  assert.equal(store.restStateOwned('j1', 'alice'), 'ACCEPTING');
});

test('restStateOwned: rebuilt from the table when the store is opened again', (t) => {
  const { store, file } = withDb(t);
  store.insertMany([job('j1', 'alice'), job('j2', 'bob', 'FINISHED'), job('j3', 'alice')]);
  const j3 = store.get('j3');
  assert.ok(j3 && store.update(j3, { restState: 'KILLED' }));
  const again = openDatabase(file);
  t.after(() => again.close());
  const reopened = new JobStore(again);
  assert.deepEqual(statesOf(reopened, ['j1', 'j2', 'j3'], 'alice'), ['ACCEPTING', undefined, 'KILLED']);
  assert.equal(reopened.restStateOwned('j2', 'bob'), 'FINISHED');
});

test('job store writes inside an outer transaction are refused (the index could not follow a rollback)', (t) => {
  const { store, db } = withDb(t);
  store.insertMany([job('j1', 'alice')]);
  const j1 = store.get('j1');
  assert.ok(j1);
  const inOuter = (fn: () => void) => db.transaction(fn)();
  assert.throws(() => inOuter(() => store.insertMany([job('j2', 'alice')])), /outer transaction/);
  assert.throws(() => inOuter(() => void store.update(j1, { restState: 'RUNNING' })), /outer transaction/);
  assert.throws(() => inOuter(() => void store.delete(j1)), /outer transaction/);
  assert.equal(fromTable(db, 'j2', 'alice'), undefined);
  assert.deepEqual(statesOf(store, ['j1', 'j2'], 'alice'), ['ACCEPTING', undefined]);
});

test('restStateOwned: equals the table after random inserts, updates, stale updates and deletes', (t) => {
  const { store, db } = withDb(t);
  const owners = ['alice', 'bob', 'carol'];
  const states = ['ACCEPTING', 'RUNNING', 'FINISHED', 'FAILED', 'KILLED'];
  const ids = Array.from({ length: 50 }, (_, i) => `id${i}`);
  const op = fc.tuple(fc.nat(ids.length - 1), fc.nat(3), fc.nat(owners.length - 1), fc.nat(states.length - 1));
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 300 }), (ops) => {
      for (const [i, kind, o, st] of ops) {
        const id = ids[i] as string;
        const current = store.get(id);
        if (current === undefined || kind === 0) {
          try {
            store.insertMany([job(id, owners[o] as string, states[st])]);
          } catch {
            assert.ok(current, 'only an existing id may fail to insert');
          }
        } else if (kind === 1) store.update(current, { restState: states[st] });
        else if (kind === 2)
          assert.equal(store.update({ id, version: current.version - 1 }, { restState: 'STALE' }), undefined);
        else store.delete(current);
      }
      for (const id of ids)
        for (const o of owners) assert.equal(store.restStateOwned(id, o), fromTable(db, id, o), `${id} of ${o}`);
    }),
    { numRuns: 30, seed: 20261122 },
  );
});

test('index filled in slices while the store is used: answers are right before, during and after, and it ends equal to the table', async (t) => {
  const { store, file } = withDb(t);
  const ids = Array.from({ length: 5000 }, (_, i) => `s${i}`);
  store.insertMany(ids.map((id, i) => job(id, i % 2 ? 'alice' : 'bob')));
  const again = openDatabase(file);
  t.after(() => again.close());
  const later = new JobStore(again, { index: 'later' });
  assert.equal(later.indexComplete, false);
  // Before any slice: answered from the table.
  assert.equal(later.restStateOwned('s1', 'alice'), 'ACCEPTING');
  assert.equal(later.restStateOwned('s1', 'bob'), undefined);
  assert.equal(later.restStateOwned('nope', 'alice'), undefined);
  assert.equal(later.has('s2'), true);
  assert.equal(later.has('nope'), false);
  // Writes while the fill runs: to rows read already and to rows not read yet.
  const fill = later.fillIndexInSlices(700);
  const changes: Promise<void>[] = [];
  for (const i of [3, 4001, 4999]) {
    changes.push(
      new Promise((resolve) =>
        setImmediate(() => {
          const j = later.get(`s${i}`);
          assert.ok(j && later.update(j, { restState: 'RUNNING' }));
          resolve();
        }),
      ),
    );
  }
  const gone = later.get('s4000');
  assert.ok(gone && later.delete(gone));
  later.insertMany([job('fresh', 'alice', 'PREPARING')]);
  await Promise.all([fill, ...changes]);
  assert.equal(later.indexComplete, true);
  for (const id of [...ids, 'fresh']) {
    for (const owner of ['alice', 'bob']) {
      assert.equal(later.restStateOwned(id, owner), fromTable(again, id, owner), `${id} of ${owner}`);
    }
  }
  assert.equal(later.has('s4000'), false);
});

test('index fill stopped before the database closes: nothing more is read', async (t) => {
  const { store, file } = withDb(t);
  store.insertMany(Array.from({ length: 3000 }, (_, i) => job(`x${i}`, 'alice')));
  const again = openDatabase(file);
  const later = new JobStore(again, { index: 'later' });
  const fill = later.fillIndexInSlices(500);
  later.stopIndexFill();
  await fill;
  again.close();
  assert.equal(later.indexComplete, false);
  t.after(() => undefined);
});
