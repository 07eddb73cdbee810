// Migration 13 on a real database written by an earlier schema: the accounting records
// stored before it are all still to be sent to APEL (none is taken as sent), and the
// outbox starts empty; the first queueing carries every one of them.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { ApelOutbox } from '../../src/accounting/apel-outbox.js';
import { databaseAtSchema } from '../helpers/old-database.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr13-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 13: the APEL outbox', () => {
  it('records stored before are unsent and queued by the first run; the outbox starts empty', () => {
    const file = join(dir, 'ceres.db');
    // Schema 11: the helper cannot apply 12 (it needs the service's SQL function); 12 and 13 run here.
    databaseAtSchema(file, 11, { id: 'oldjob', state: 'FINISHED', restState: 'FINISHED' });
    const old = new Database(file);
    old.exec(
      `INSERT INTO accounting_records (job_id, ended_at, endpoint, queue, owner, final_state, submitted_at, cores, recorded_at)
       VALUES ('oldjob', 2, 'https://ce', 'main', '/CN=a', 'FINISHED', 1, 1, 3)`,
    );
    old.close();
    const db = openDatabase(file);
    try {
      const o = new ApelOutbox(db, { site: 'S', machineName: 'h', messages: 'individual', batchSize: 10 });
      assert.deepEqual(o.backlog(), { unqueuedRecords: 1, unsentMessages: 0 });
      assert.deepEqual(o.queueNext(), { messages: 2, records: 1 });
      assert.match(o.next()!.body, /^LocalJobId: oldjob$/m);
    } finally {
      db.close();
    }
  });
});
