/**
 * The count of the jobs not in a final state (JobStore.countActiveByState), which the info
 * document and the web overview read: the same figures as the full count without the ended
 * jobs, read from the partial covering index of migration 17 (not from the jobs' rows), and a
 * job leaves it when it ends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { FINAL_STATES } from '../../src/vocabulary/job-states.js';
import { sqlStates } from '../../src/store/state-list.js';

test('the active jobs per state and queue, from the covering index; an ended job leaves it', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-active-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const ins = db.prepare(
    `INSERT INTO jobs (id, owner, state, pending, rest_state, lrms_state, queue, format, description, raw, created_at, updated_at)
     VALUES (?, 'o', ?, ?, ?, ?, ?, 'xrsl', '{}', '', 0, 0)`,
  );
  const rows: [string, string, number, string, string | null, string][] = [
    ['a', 'ACCEPTED', 1, 'ACCEPTED', null, 'main'],
    ['b', 'INLRMS', 0, 'RUNNING', 'RUNNING', 'main'],
    ['c', 'INLRMS', 0, 'RUNNING', 'RUNNING', 'main'],
    ['d', 'INLRMS', 0, 'QUEUING', 'QUEUING', 'short'],
    ['e', 'FINISHED', 0, 'FINISHED', null, 'main'],
    ['f', 'DELETED', 0, 'WIPED', null, 'short'],
  ];
  for (const r of rows) ins.run(...r);
  const store = new JobStore(db);
  const key = (r: { state: string; pending: number; lrmsState: string | null; queue: string; n: number }) =>
    `${r.state}/${r.pending}/${r.lrmsState}/${r.queue}=${r.n}`;
  const active = store.countActiveByState().map(key).sort();
  const all = store
    .countByState()
    .filter((r) => !FINAL_STATES.includes(r.state))
    .map(key)
    .sort();
  assert.deepEqual(active, all);
  assert.deepEqual(active, ['ACCEPTED/1/null/main=1', 'INLRMS/0/QUEUING/short=1', 'INLRMS/0/RUNNING/main=2']);
  const plan = (
    db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT state, pending, lrms_state, queue, COUNT(*) FROM jobs WHERE state NOT IN (${sqlStates(FINAL_STATES)}) GROUP BY state, pending, lrms_state, queue`,
      )
      .all() as { detail: string }[]
  )
    .map((p) => p.detail)
    .join('; ');
  assert.match(plan, /COVERING INDEX jobs_active_counts/, plan);
  assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
  db.prepare("UPDATE jobs SET state = 'FINISHED', rest_state = 'FINISHED', lrms_state = NULL WHERE id = 'b'").run();
  assert.deepEqual(store.countActiveByState().map(key).sort(), [
    'ACCEPTED/1/null/main=1',
    'INLRMS/0/QUEUING/short=1',
    'INLRMS/0/RUNNING/main=1',
  ]);
});
