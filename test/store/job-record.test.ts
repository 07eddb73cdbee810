// The job record as the field table derives it: every column round-trips through insert,
// update and read; a row is checked once when read (a bad column fails with the job and
// the column named); the JSON columns stay unparsed until asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import { COLUMNS, columnOf, fromRow, type JobRow } from '../../src/store/job-record.js';
import { JOB_FIELDS } from '../../src/store/job-fields.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { newJobRow } from '../helpers/new-job.js';

function job(id: string): NewJob {
  // Every field given a value of its own, so that each one's round trip shows.
  return newJobRow(id, '/CN=alice', {
    queue: 'main',
    delegationId: 'd1',
    delegationIds: ['d1'],
    description: { executable: '/bin/true' },
    raw: '&(executable=/bin/true)',
    createdAt: 1000,
    rerunsLeft: 2,
    clientHost: '10.0.0.1',
    sessionIdent: '1:2',
    localAccount: 'pool01',
    fqans: ['/atlas'],
    route: { name: 'r1', partition: 'short', extraArgs: ['--nice=1'] },
  });
}

function withDb(t: { after: (fn: () => void) => void }): { db: Db; store: JobStore } {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-record-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, store: new JobStore(db) };
}

const badRow = (column: string) => (e: unknown) =>
  isCeError(e) && e.code === 'CE_ERR_STORE_BAD_ROW' && e.message.includes(column) && e.message.includes('j1');

test("the column list is the table's columns, all present in the database", (t) => {
  const { db } = withDb(t);
  const inDb = new Set((db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name));
  const cols = COLUMNS.split(', ');
  assert.deepEqual(
    cols,
    Object.values(JOB_FIELDS).map((f) => f.column),
  );
  for (const c of cols) assert.ok(inDb.has(c), c);
  assert.equal(columnOf.restState, 'rest_state');
});

test('a submission stores the given fields and the defaults; every field reads back', (t) => {
  const { store } = withDb(t);
  store.insertMany([job('j1')]);
  const r = store.get('j1');
  assert.ok(r);
  assert.deepEqual(
    { ...r },
    {
      id: 'j1',
      owner: '/CN=alice',
      ownerDn: '/CN=alice',
      state: 'ACCEPTED',
      pending: false,
      restState: 'ACCEPTING',
      lrmsState: null,
      batchReason: null,
      outcome: null,
      queue: 'main',
      delegationId: 'd1',
      format: 'xrsl',
      description: { executable: '/bin/true' },
      createdAt: 1000,
      updatedAt: 1000,
      stateEnteredAt: null,
      localId: null,
      exitCode: null,
      failedState: null,
      failedCause: null,
      failureReason: null,
      killRequested: false,
      cleanRequested: false,
      restartRequested: false,
      rerunsLeft: 2,
      startedAt: null,
      endedAt: null,
      eraseAt: null,
      clientHost: '10.0.0.1',
      route: { name: 'r1', partition: 'short', extraArgs: ['--nice=1'] },
      sessionIdent: '1:2',
      localAccount: 'pool01',
      fqans: ['/atlas'],
      name: '',
      engine: {},
      version: 0,
    },
  );
  assert.equal(store.rawDescription('j1'), '&(executable=/bin/true)');
  assert.deepEqual(store.delegationsOf('j1'), ['d1']);
});

test('an absent session identity is stored as null', (t) => {
  const { store } = withDb(t);
  const { sessionIdent: _, ...rest } = job('j1');
  store.insertMany([rest]);
  assert.equal(store.get('j1')?.sessionIdent, null);
});

test('an update writes each changed field in its column form and reads it back', (t) => {
  const { db, store } = withDb(t);
  store.insertMany([job('j1')]);
  const r0 = store.get('j1');
  assert.ok(r0);
  const r1 = store.update(
    r0,
    {
      state: 'INLRMS',
      lrmsState: 'RUNNING',
      killRequested: true,
      exitCode: 3,
      engine: { usage: { cpu: 1 } },
      eraseAt: 99,
    },
    5000,
  );
  assert.ok(r1);
  assert.equal(r1.version, 1);
  assert.equal(r1.updatedAt, 5000);
  assert.equal(r1.killRequested, true);
  assert.deepEqual(r1.engine, { usage: { cpu: 1 } });
  const raw = db.prepare('SELECT kill_requested, engine, lrms_state, erase_at FROM jobs WHERE id = ?').get('j1');
  assert.deepEqual(raw, { kill_requested: 1, engine: '{"usage":{"cpu":1}}', lrms_state: 'RUNNING', erase_at: 99 });
  assert.equal(store.update(r0, { state: 'FINISHED' }), undefined, 'compare-and-set on the old version');
});

test('a flag column holding something but 0 or 1 is refused when read, naming job and column', (t) => {
  const { db, store } = withDb(t);
  store.insertMany([job('j1')]);
  db.prepare('UPDATE jobs SET kill_requested = 2 WHERE id = ?').run('j1');
  assert.throws(() => store.get('j1'), badRow('kill_requested'));
  assert.throws(() => store.listByStates(['ACCEPTED']), badRow('kill_requested'));
});

test('a row lacking a column of the table (a migration not applied) is refused when read', () => {
  const { session_ident: _, ...row } = rowOf();
  assert.throws(() => fromRow(row as JobRow), badRow('session_ident'));
});

test('a text column holding a number is refused when read', () => {
  assert.throws(() => fromRow({ ...rowOf(), owner: 7 } as unknown as JobRow), badRow('owner'));
});

test('the JSON columns are parsed on first access only', () => {
  const r = fromRow({ ...rowOf(), description: '{not json', engine: '{"a":1}' });
  assert.equal(r.id, 'j1');
  assert.throws(() => r.description, SyntaxError);
  assert.deepEqual(r.engine, { a: 1 });
  assert.equal(r.engine, r.engine, 'parsed once');
});

test('an unknown description language reads as ADL', () => {
  assert.equal(fromRow({ ...rowOf(), format: 'jsdl' }).format, 'adl');
});

function rowOf(): JobRow {
  return {
    id: 'j1',
    owner: 'o',
    owner_dn: 'o',
    route: null,
    name: '',
    state: 'ACCEPTED',
    pending: 0,
    rest_state: 'ACCEPTING',
    batch_reason: null,
    lrms_state: null,
    outcome: null,
    queue: 'q',
    delegation_id: null,
    format: 'xrsl',
    description: '{}',
    created_at: 1,
    updated_at: 1,
    state_entered_at: null,
    local_id: null,
    exit_code: null,
    failed_state: null,
    failed_cause: null,
    failure_reason: null,
    kill_requested: 0,
    clean_requested: 0,
    restart_requested: 0,
    reruns_left: 0,
    started_at: null,
    ended_at: null,
    erase_at: null,
    client_host: null,
    session_ident: null,
    local_account: null,
    fqans: null,
    engine: '{}',
    version: 0,
  };
}
