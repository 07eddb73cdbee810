// The start-up catch-up of accounting records reads the store in slices (rowid pages):
// every ended run without its record is found, whatever page it falls in, and only those.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { AccountingRecorder } from '../../src/accounting/recorder.js';
import { parseXrsl } from '../../src/jobdesc/xrsl/parse-xrsl.js';
import { newJobRow } from '../helpers/new-job.js';

test('accounting catch-up pages: the runs without a record are found in every page, and nothing else', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-catchup-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new JobStore(db);
  const parsed = parseXrsl('&(executable=/bin/true)');
  assert.ok(parsed.ok);
  const n = 2503;
  store.insertMany(
    Array.from({ length: n }, (_, i) =>
      newJobRow(`j${i}`, '/CN=alice', { queue: 'main', description: parsed.description, createdAt: 1 }),
    ),
  );
  // All ended except every 7th (still active: never missing); every other one recorded.
  db.prepare("UPDATE jobs SET state = 'FINISHED', rest_state = 'FINISHED', ended_at = 1000 WHERE rowid % 7 != 0").run();
  const recorder = new AccountingRecorder({
    db,
    endpoint: () => 'https://ce',
    statistics: () => Promise.resolve(undefined),
  });
  const expected: string[] = [];
  for (let i = 0; i < n; i++) {
    const j = store.get(`j${i}`)!;
    if (j.state !== 'FINISHED') continue;
    if (i % 2 === 0 && i !== 0 && i !== n - 1) assert.equal(await recorder.record(j), true);
    else expected.push(j.id);
  }
  for (const page of [1, 100, 1000, 5000]) {
    const found: string[] = [];
    let pages = 0;
    for (let after: number | undefined = 0; after !== undefined; pages++) {
      const p = recorder.missingPage(after, page);
      found.push(...p.ids);
      after = p.next;
    }
    assert.deepEqual(found.sort(), [...expected].sort(), `pages of ${page}`);
    assert.ok(pages >= Math.ceil(n / page), `${pages} pages of ${page}`);
  }
  // Once written, none is missing any more.
  for (const id of expected) await recorder.record(store.get(id)!);
  assert.deepEqual(recorder.missingPage(0, 10_000), { ids: [], next: undefined });
});
