import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import { newJobRow } from '../helpers/new-job.js';

function job(id: string, owner = 'alice'): NewJob {
  return newJobRow(id, owner, { queue: 'main', createdAt: 1 });
}

/** A real store whose transactions are counted. */
function setup(t: { after: (fn: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-gc-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new JobStore(db);
  const commits: number[] = [];
  const sink = {
    insertMany(jobs: readonly NewJob[]) {
      store.insertMany(jobs);
      commits.push(jobs.length);
    },
  };
  return { store, commits, gc: new GroupCommit(sink) };
}

test('submissions of one event-loop turn share one commit', async (t) => {
  const { store, commits, gc } = setup(t);
  await Promise.all([
    gc.insert([job('a1'), job('a2')]),
    gc.insert([job('b1')]),
    gc.insert([job('c1'), job('c2'), job('c3')]),
  ]);
  assert.deepEqual(commits, [6]);
  for (const id of ['a1', 'a2', 'b1', 'c1', 'c2', 'c3']) assert.ok(store.get(id), id);
});

test('a submission is stored when its promise resolves, not before it was queued', async (t) => {
  const { store, commits, gc } = setup(t);
  const p = gc.insert([job('x')]);
  assert.equal(store.get('x'), undefined);
  await p;
  assert.ok(store.get('x'));
  await gc.insert([job('y')]);
  assert.deepEqual(commits, [1, 1]);
});

test('one failing submission fails alone; the others of its turn are stored', async (t) => {
  const { store, gc } = setup(t);
  await gc.insert([job('dup')]);
  const results = await Promise.allSettled([
    gc.insert([job('ok1')]),
    gc.insert([job('new1'), job('dup')]), // primary key clash: this whole request fails
    gc.insert([job('ok2'), job('ok3')]),
  ]);
  assert.equal(results[0]?.status, 'fulfilled');
  assert.equal(results[1]?.status, 'rejected');
  assert.match(String(results[1].reason), /UNIQUE|constraint/i);
  assert.equal(results[2]?.status, 'fulfilled');
  for (const id of ['ok1', 'ok2', 'ok3']) assert.ok(store.get(id), id);
  // All or nothing per request: the good job of the failed request is not stored either.
  assert.equal(store.get('new1'), undefined);
});

test('a lone failing submission is rejected and stores nothing', async (t) => {
  const { store, gc } = setup(t);
  await assert.rejects(gc.insert([job('z1'), job('z1')]), /UNIQUE|constraint/i);
  assert.equal(store.get('z1'), undefined);
  await gc.insert([job('z2')]);
  assert.ok(store.get('z2'));
});

test('an empty submission resolves without a commit', async (t) => {
  const { commits, gc } = setup(t);
  await gc.insert([]);
  assert.deepEqual(commits, []);
});
