// Migration 11 on a real database written by the previous schema: an accounting record
// stored before it reads back with no figure marked as reported by the job, and a new
// record keeps its list across reopening.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { databaseAtSchema } from '../helpers/old-database.js';
import { fromRow, type AccountingRecord, type AccountingRow } from '../../src/accounting/record.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr11-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 11: figures of an accounting record that only the job reported', () => {
  it('a record stored by the previous schema has none; a stored list survives reopening', () => {
    const file = join(dir, 'ceres.db');
    databaseAtSchema(file, 10, { id: 'oldjob', state: 'FINISHED', restState: 'FINISHED' });
    // A record as the previous release wrote it, before the migration runs.
    const old = new Database(file);
    old.exec(
      `INSERT INTO accounting_records (job_id, ended_at, endpoint, queue, owner, final_state, submitted_at, cores, recorded_at)
       VALUES ('oldjob', 2, 'https://ce', 'main', '/CN=a', 'FINISHED', 1, 1, 3)`,
    );
    old.close();
    let db = openDatabase(file);
    const all = (): AccountingRecord[] =>
      (db.prepare('SELECT * FROM accounting_records ORDER BY job_id').all() as AccountingRow[]).map(fromRow);
    assert.deepEqual(
      all().map((r) => r.jobReported),
      [[]],
    );
    db.prepare(
      `INSERT INTO accounting_records (job_id, ended_at, endpoint, queue, owner, final_state, submitted_at, cores, recorded_at, job_reported)
       VALUES ('newjob', 2, 'https://ce', 'main', '/CN=a', 'FINISHED', 1, 1, 3, ?)`,
    ).run(JSON.stringify(['cpuTime', 'maxRss']));
    db.close();
    db = openDatabase(file);
    assert.deepEqual(
      all().map((r) => [r.jobId, r.jobReported]),
      [
        ['newjob', ['cpuTime', 'maxRss']],
        ['oldjob', []],
      ],
    );
    db.close();
  });
});
