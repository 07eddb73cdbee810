// Migration 5 on a real database written by the previous schema: jobs stored before it
// keep working with no session identity (the documented legacy behaviour), new jobs
// store the identity of the directory made for them, durably.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations.js';
import { databaseAtSchema } from '../helpers/old-database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import { newJobRow } from '../helpers/new-job.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr5-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const job = (id: string, extra: Partial<NewJob> = {}): NewJob =>
  newJobRow(id, '/CN=a', { state: 'FINISHED', restState: 'FINISHED', createdAt: 1, ...extra });

describe('migration 5: session directory identity', () => {
  it('a job stored by the previous schema reads back with no identity; new jobs keep theirs across reopening', () => {
    const file = join(dir, 'ceres.db');
    // The database as the previous version left it: migrations 1-4 and one job.
    databaseAtSchema(file, 4, { id: 'oldjob', state: 'FINISHED', restState: 'FINISHED' });

    let db = openDatabase(file);
    let store = new JobStore(db);
    assert.equal(store.get('oldjob')?.sessionIdent, null);
    store.insertMany([job('newjob', { sessionIdent: '2049:123456789012345678' }), job('noident')]);
    db.close();

    db = openDatabase(file);
    store = new JobStore(db);
    assert.equal(
      store.get('newjob')?.sessionIdent,
      '2049:123456789012345678',
      'stored exactly (inode numbers beyond 2^53 too)',
    );
    assert.equal(store.get('noident')?.sessionIdent, null);
    assert.equal(store.get('oldjob')?.sessionIdent, null);
    assert.deepEqual(
      (db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number }).v,
      migrations.at(-1)?.version,
    );
    db.close();
  });
});
