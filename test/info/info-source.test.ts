// The live info source: the version it publishes is package.json's, and its figures come
// from the store (a real SQLite database).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../src/config/load.js';
import { CERES_VERSION } from '../../src/config/version.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { findElement as find } from '../helpers/xml-find.js';
import { newJobRow } from '../helpers/new-job.js';
import { liveSource } from './fixtures.js';

// Tests run with the repository root as working directory (npm test).
const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

test('the version is the one in package.json', () => {
  assert.equal(CERES_VERSION, packageVersion);
  assert.match(CERES_VERSION, /^\d+\.\d+\.\d+/);
});

test('the GLUE2 document publishes that version and counts the stored jobs', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-info-source-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new JobStore(db);
  store.insertMany([newJobRow('j1', 'o', { queue: 'main', format: 'adl', raw: '', createdAt: 1 })]);
  const config = buildConfig({ stateDir: dir });
  const source = liveSource(config, store);
  const doc = source.document();
  const version = find(doc, 'ImplementationVersion');
  assert.deepEqual(version?.children, [packageVersion]);
  const total = find(doc, 'TotalJobs');
  assert.deepEqual(total?.children, ['1']);
});
