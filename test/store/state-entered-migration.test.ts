// Migration 10 on a real database written by the previous schema: a job stored before it
// reads back with no entry time (the time-in-state histogram then times it from its next
// state), and a change of state stores one that reopening the database keeps.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations.js';
import { JobStore } from '../../src/store/job-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr10-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 10: when a job entered its state', () => {
  it('a job stored by the previous schema reads back with none; a stored entry time survives reopening', () => {
    const file = join(dir, 'ceres.db');
    // The database as the previous release left it: migrations 1-9 and one job in INLRMS.
    const old = new Database(file);
    old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    for (const m of migrations.filter((x) => x.version <= 9)) {
      old.exec(m.sql);
      old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, 1);
    }
    old
      .prepare(
        `INSERT INTO jobs (id, owner, state, pending, rest_state, queue, format, description, raw, created_at, updated_at, reruns_left) VALUES ('oldjob', '/CN=a', 'INLRMS', 0, 'RUNNING', '', 'xrsl', '{}', 'x', 1, 1, 0)`,
      )
      .run();
    old.close();

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
