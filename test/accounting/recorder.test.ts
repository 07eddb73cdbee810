// The accounting recorder reads a job's `statistics` control file only when the job
// moves data (an input with a source, an output with a target): only transfers write
// statistics lines, so a trivial job costs no file read, and a job that moved data still
// has its bytes counted. The figures a backend says only the job reported are kept with
// the record.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { AccountingRecorder } from '../../src/accounting/recorder.js';
import { fromRow, type AccountingRow } from '../../src/accounting/record.js';
import { parseXrsl } from '../../src/jobdesc/xrsl/parse-xrsl.js';
import { newJobRow } from '../helpers/new-job.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-recorder-'));
const db = openDatabase(join(dir, 'db'));
const store = new JobStore(db);
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function job(id: string, xrsl: string) {
  const parsed = parseXrsl(xrsl);
  assert.ok(parsed.ok);
  store.insertMany([newJobRow(id, '/CN=alice', { queue: 'main', description: parsed.description, raw: xrsl })]);
  const j = store.get(id);
  assert.ok(j);
  return j;
}

const STATS =
  'inputfile:url=https://example.org/in,size=1000,starttime=x,endtime=y\n' +
  'outputfile:url=https://example.org/out,size=20,starttime=x,endtime=y\n';

function recorder(): { r: AccountingRecorder; reads: string[] } {
  const reads: string[] = [];
  const r = new AccountingRecorder({
    db,
    endpoint: () => 'https://ce.example.org/arex',
    statistics: (id) => {
      reads.push(id);
      return Promise.resolve(STATS);
    },
  });
  return { r, reads };
}

describe('accounting recorder: transfer bytes', () => {
  it('a job that moves no data does not read its statistics file and records zero bytes', async () => {
    const { r, reads } = recorder();
    const rec = await r.build(job('t1', '&(executable=/bin/true)(stdout=out)(inputfiles=("up" ""))'));
    assert.deepEqual(reads, []);
    assert.equal(rec.stageInBytes, 0);
    assert.equal(rec.stageOutBytes, 0);
  });

  it('a job with an input to download has its statistics read', async () => {
    const { r, reads } = recorder();
    const rec = await r.build(job('t2', '&(executable=/bin/true)(inputfiles=("in" "https://example.org/in"))'));
    assert.deepEqual(reads, ['t2']);
    assert.equal(rec.stageInBytes, 1000);
    assert.equal(rec.stageOutBytes, 20);
  });

  it('a job with an output to upload has its statistics read', async () => {
    const { r, reads } = recorder();
    const rec = await r.build(job('t3', '&(executable=/bin/true)(outputfiles=("out" "https://example.org/out"))'));
    assert.deepEqual(reads, ['t3']);
    assert.equal(rec.stageOutBytes, 20);
  });

  it('a statistics file that cannot be read counts as no bytes, not as a failure', async () => {
    const r = new AccountingRecorder({
      db,
      endpoint: () => 'https://ce.example.org/arex',
      statistics: () => Promise.reject(new Error('EACCES')),
    });
    const rec = await r.build(job('t4', '&(executable=/bin/true)(inputfiles=("in" "https://example.org/in"))'));
    assert.equal(rec.stageInBytes, 0);
  });
});

describe('accounting recorder: figures only the job reported', () => {
  const ended = (id: string, usage: Record<string, unknown>) => {
    const j = job(id, '&(executable="/bin/true")');
    return { ...j, restState: 'FINISHED', endedAt: Date.now(), engine: { ...j.engine, usage } };
  };
  const stored = (id: string) =>
    fromRow(db.prepare('SELECT * FROM accounting_records WHERE job_id = ?').get(id) as AccountingRow);

  it('the list the backend gave is stored with the record and read back', async () => {
    const { r } = recorder();
    assert.ok(
      await r.record(ended('jr1', { wallTimeSeconds: 5, cpuTimeSeconds: 1, jobReported: ['cpuTime', 'exitCode'] })),
    );
    assert.deepEqual(stored('jr1').jobReported, ['exitCode', 'cpuTime']);
  });

  it('no list (a backend that measured everything) is an empty one; unknown names and junk are dropped', async () => {
    const { r } = recorder();
    assert.ok(await r.record(ended('jr2', { wallTimeSeconds: 5 })));
    assert.deepEqual(stored('jr2').jobReported, []);
    assert.ok(await r.record(ended('jr3', { jobReported: ['cpuTime', 'made-up', 7, null] })));
    assert.deepEqual(stored('jr3').jobReported, ['cpuTime']);
    assert.ok(await r.record(ended('jr4', { jobReported: 'cpuTime' })));
    assert.deepEqual(stored('jr4').jobReported, []);
  });
});
