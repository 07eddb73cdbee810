import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/jobs/store/database.js';
import { JobStore, type NewJob } from '../../src/jobs/store/job-store.js';

function job(id: string, owner: string, restState = 'ACCEPTING'): NewJob {
  return {
    id, owner, state: 'ACCEPTED', restState, queue: 'main', delegationId: null, delegationIds: [],
    format: 'xrsl', description: {}, raw: '&(executable=/bin/true)', createdAt: 1, rerunsLeft: 0, clientHost: null,
  };
}

function withStore(t: { after: (fn: () => void) => void }): JobStore {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-store-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return new JobStore(db);
}

test('restStatesOwned: only the owner\'s existing jobs, whatever the ids contain', (t) => {
  const store = withStore(t);
  const odd = ['a"b', 'back\\slash', 'ünï', 'with space', '[1]', "it's"];
  store.insertMany([job('j1', 'alice'), job('j2', 'alice', 'FINISHED'), job('j3', 'bob'), ...odd.map((id) => job(id, 'alice', 'RUNNING'))]);
  const got = store.restStatesOwned(['j1', 'j2', 'j3', 'nosuch', 'j1', '', ...odd], 'alice');
  assert.deepEqual(
    [...got.entries()].sort(),
    [['j1', 'ACCEPTING'], ['j2', 'FINISHED'], ...odd.map((id) => [id, 'RUNNING'])].sort(),
  );
  assert.equal(store.restStatesOwned(['j1', 'j2'], 'bob').size, 0);
  assert.deepEqual([...store.restStatesOwned(['j3'], 'bob')], [['j3', 'ACCEPTING']]);
  assert.equal(store.restStatesOwned([], 'alice').size, 0);
});

test('restStatesOwned: an owner that differs only in case or spacing owns nothing', (t) => {
  const store = withStore(t);
  store.insertMany([job('j1', '/DC=org/CN=Alice')]);
  assert.equal(store.restStatesOwned(['j1'], '/DC=org/CN=alice').size, 0);
  assert.equal(store.restStatesOwned(['j1'], '/DC=org/CN=Alice ').size, 0);
  assert.equal(store.restStatesOwned(['j1'], '/DC=org/CN=Alice').size, 1);
});

test('restStatesOwned: follows updates and deletions, 10,000 ids in one call', (t) => {
  const store = withStore(t);
  const ids = Array.from({ length: 10_000 }, (_, i) => `job${i}`);
  store.insertMany(ids.map((id) => job(id, 'alice')));
  const first = store.get('job7');
  assert.ok(first);
  assert.ok(store.update(first, { restState: 'RUNNING' }));
  const eighth = store.get('job8');
  assert.ok(eighth && store.delete(eighth));
  const got = store.restStatesOwned(ids, 'alice');
  assert.equal(got.size, 9_999);
  assert.equal(got.get('job7'), 'RUNNING');
  assert.equal(got.has('job8'), false);
  assert.equal(got.get('job9999'), 'ACCEPTING');
});
