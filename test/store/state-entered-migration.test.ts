// Migration 10 on a real database written by the previous schema: a job stored before it
// reads back with no entry time (the time-in-state histogram then times it from its next
// state), and a change of state stores one that reopening the database keeps.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { databaseAtSchema } from '../helpers/old-database.js';
import { JobStore } from '../../src/store/job-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr10-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 10: when a job entered its state', () => {
  it('a job stored by the previous schema reads back with none; a stored entry time survives reopening', () => {
    const file = join(dir, 'ceres.db');
    // The database as the previous release left it: migrations 1-9 and one job in INLRMS.
    databaseAtSchema(file, 9, { id: 'oldjob', state: 'INLRMS', restState: 'RUNNING' });

    let db = openDatabase(file);
    let store = new JobStore(db);
    const j = store.get('oldjob');
    assert.equal(j?.stateEnteredAt, null);
    assert.ok(j && store.update(j, { state: 'FINISHING', stateEnteredAt: 1_234_567 }, 1_234_567));
    db.close();

    db = openDatabase(file);
    store = new JobStore(db);
    assert.equal(store.get('oldjob')?.stateEnteredAt, 1_234_567);
    db.close();
  });
});
