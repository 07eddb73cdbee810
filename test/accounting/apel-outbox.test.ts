// The durable outbox of messages for APEL: records are put into stored messages and
// marked in one transaction; individual records in batches with a sync message per
// month; summaries rebuilt from the whole month (so a late record resends its month);
// marks follow acknowledgements; republish queues a range again; messages stay under
// the size bound; MachineName is the published host name.
import { describe, it, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { ApelOutbox, empaId, monthOf, pack, republish, MAX_MESSAGE_BYTES } from '../../src/accounting/apel-outbox.js';
import { insertRecords } from '../helpers/accounting-records.js';

const OCT = Date.UTC(2026, 9, 1);
const NOV = Date.UTC(2026, 10, 1);
const HOUR = 3600_000;

describe('APEL outbox', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-outbox-'));
  const dbs: Db[] = [];
  let db: Db;
  let n = 0;
  beforeEach(() => {
    db = openDatabase(join(dir, `db${++n}`));
    dbs.push(db);
  });
  after(() => {
    for (const d of dbs) d.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const outbox = (messages: 'summaries' | 'individual', batchSize = 500) =>
    new ApelOutbox(db, { site: 'CERES-TEST', machineName: 'ce.example.org', messages, batchSize });
  /** Sends everything: each message marked sent as if acknowledged; returns them. */
  const drain = (o: ApelOutbox) => {
    const sent = [];
    for (;;) {
      const m = o.next();
      if (m === undefined && o.queueNext().messages === 0) return sent;
      if (m === undefined) continue;
      sent.push(m);
      o.markSent(m.id, `ams-${m.id}`);
    }
  };

  it('individual records: batches of batchSize, a sync message per month, every record once', () => {
    insertRecords(db, 1050, { fromMs: OCT + HOUR, stepMs: 60_000 });
    const o = outbox('individual');
    const sent = drain(o);
    const jobs = sent.filter((m) => m.kind === 'individual');
    assert.deepEqual(
      jobs.map((m) => m.records),
      [500, 500, 50],
    );
    const text = jobs.map((m) => m.body).join('');
    const ids = [...text.matchAll(/^LocalJobId: (\S+)$/gm)].map((x) => x[1]);
    assert.equal(ids.length, 1050);
    assert.equal(new Set(ids).size, 1050);
    assert.ok(jobs.every((m) => m.body.startsWith('APEL-individual-job-message: v0.3\n')));
    assert.match(text, /^MachineName: ce\.example\.org$/m);
    assert.match(text, /^Site: CERES-TEST\nSubmitHost: https:\/\/ce\.example\.org:443\/arex\nMachineName/m);
    assert.match(text, /^FQAN: \/cms\/Role=NULL\/Capability=NULL\nVO: cms\nVOGroup: \/cms\nVORole: None$/m);
    const syncs = sent.filter((m) => m.kind === 'sync');
    assert.ok(syncs.length >= 1);
    assert.match(
      syncs.at(-1)!.body,
      /^APEL-sync-message: v0.1\nSite: CERES-TEST\nSubmitHost: \S+\nNumberOfJobs: 1050\nMonth: 10\nYear: 2026\n%%\n$/,
    );
    assert.deepEqual(o.backlog(), { unqueuedRecords: 0, unsentMessages: 0 });
  });

  it('nothing counts as sent before its acknowledgement: queued but unsent messages stay, in order', () => {
    insertRecords(db, 30, { fromMs: OCT, stepMs: 1000 });
    const o = outbox('individual', 10);
    assert.equal(o.queueNext().messages, 4);
    assert.deepEqual(o.backlog(), { unqueuedRecords: 0, unsentMessages: 4 });
    const first = o.next()!;
    o.noteFailure(first.id, 'publish call answered 503');
    // A failure leaves it the next one to send, with its attempts counted.
    assert.equal(o.next()!.id, first.id);
    assert.equal(o.next()!.attempts, 1);
    o.markSent(first.id, 'a');
    assert.notEqual(o.next()!.id, first.id);
    assert.equal(o.backlog().unsentMessages, 3);
    // A repeat carries the same empaid: the same message.
    assert.equal(empaId(first), empaId({ ...first }));
    assert.match(empaId(first), /^\d{8}\/\d{14}-\d+$/);
  });

  it('summaries: one month at a time, built from every record of the month; a late record resends its month', () => {
    insertRecords(db, 6, { fromMs: OCT + HOUR, stepMs: HOUR });
    insertRecords(db, 3, { fromMs: NOV + HOUR, stepMs: HOUR, prefix: 'nov' });
    const o = outbox('summaries');
    const first = drain(o);
    assert.deepEqual(
      first.map((m) => m.kind),
      ['summary', 'sync', 'summary', 'sync'],
    );
    assert.ok(first[0]!.body.startsWith('APEL-summary-job-message: v0.2\n'));
    assert.match(first[0]!.body, /Month: 10\nYear: 2026/);
    assert.match(first[2]!.body, /Month: 11\nYear: 2026/);
    const jobs = (body: string) => [...body.matchAll(/NumberOfJobs: (\d+)/g)].reduce((a, x) => a + Number(x[1]), 0);
    assert.equal(jobs(first[0]!.body), 6);
    // A record of October arriving late: October is sent whole again (APEL replaces it).
    insertRecords(db, 1, { fromMs: OCT + 30 * HOUR, stepMs: 0, prefix: 'late' });
    const again = drain(o);
    assert.deepEqual(
      again.map((m) => m.kind),
      ['summary', 'sync'],
    );
    assert.equal(jobs(again[0]!.body), 7);
    assert.match(again[1]!.body, /NumberOfJobs: 7\nMonth: 10/);
    assert.deepEqual(drain(o), [], 'nothing new, nothing sent');
  });

  it('republish queues the records of a range again; other records stay sent', () => {
    insertRecords(db, 20, { fromMs: OCT, stepMs: HOUR });
    const o = outbox('individual', 100);
    drain(o);
    assert.equal(republish(db, OCT + 5 * HOUR, OCT + 10 * HOUR), 5);
    const again = drain(o).filter((m) => m.kind === 'individual');
    assert.equal(again.length, 1);
    assert.deepEqual(
      [...again[0]!.body.matchAll(/^LocalJobId: (\S+)$/gm)].map((x) => x[1]),
      ['job-0000005', 'job-0000006', 'job-0000007', 'job-0000008', 'job-0000009'],
    );
    assert.equal(republish(db, NOV, NOV + HOUR), 0);
  });

  it('a message stays under the size bound whatever the batch size', () => {
    const items = Array.from({ length: 10 }, () => 'x'.repeat(300_000));
    const groups = pack(items, (s) => s.length, 500, MAX_MESSAGE_BYTES);
    assert.deepEqual(
      groups.map((g) => g.length),
      [2, 2, 2, 2, 2],
    );
    assert.deepEqual(
      pack([1, 2, 3, 4, 5], () => 1, 2, MAX_MESSAGE_BYTES),
      [[1, 2], [3, 4], [5]],
    );
    assert.deepEqual(
      pack([], () => 1, 2, 10),
      [],
    );
    assert.deepEqual(monthOf(Date.UTC(2026, 11, 31, 23, 59)), {
      start: Date.UTC(2026, 11, 1),
      end: Date.UTC(2027, 0, 1),
    });
  });
});
