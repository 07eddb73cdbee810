// The mapped account and the FQANs travel with the job: stored (real SQLite), shown
// in the info document (LocalOwner, OtherInfo VOMSFQAN=) and handed to the batch
// backend (BatchJobSpec.localAccount); absent when nothing was mapped.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import { activityDocument } from '../../src/jobs/activity.js';
import { batchSpec } from '../../src/engine/scheduler/batch-spec.js';
import { descriptionPort } from '../../src/jobs/description-port.js';
import { buildConfig } from '../../src/config/load.js';
import { firstChild, textOf, type XmlElement } from '../../src/doc/element.js';
import { newJobRow } from '../helpers/new-job.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-jobacct-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function description() {
  const port = descriptionPort(buildConfig({}));
  const [item] = port.split(Buffer.from('&(executable="/bin/true")')).items;
  assert.ok(item?.ok);
  const acc = port.accept(item.description, {});
  assert.ok(acc.ok);
  return acc.description;
}

function job(id: string, extra: Partial<NewJob>): NewJob {
  return newJobRow(id, '/CN=u', { queue: 'main', description: description(), raw: '', createdAt: 1, ...extra });
}

const children = (ca: XmlElement, name: string): string[] =>
  (ca.children ?? []).filter((c): c is XmlElement => typeof c !== 'string' && c.name === name).map((c) => textOf(c));

describe('the mapped account and FQANs of a job', () => {
  const db = openDatabase(join(dir, 'db'));
  after(() => db.close());
  const store = new JobStore(db);
  const opts = { hostname: 'ce.example' };
  const ctx = {
    sessionDir: '/s',
    lrmsDir: '/l',
    rteScripts: new Map<string, string>(),
    serviceUrl: 'https://ce.example/arex',
  };
  const fqans = ['/atlas/Role=production/Capability=NULL', '/atlas/Role=NULL/Capability=NULL'];
  store.insertMany([job('mapped', { localAccount: 'atlas001', fqans }), job('plain', {})]);

  it('are stored and read back', () => {
    const j = store.get('mapped')!;
    assert.equal(j.localAccount, 'atlas001');
    assert.deepEqual(j.fqans, fqans);
    assert.equal(store.get('plain')!.localAccount, null);
    assert.deepEqual(store.get('plain')!.fqans, []);
  });

  it('are shown in the info document: LocalOwner, and one OtherInfo VOMSFQAN= per FQAN', () => {
    const ca = activityDocument(store.get('mapped')!, opts).element();
    assert.equal(textOf(firstChild(ca, 'LocalOwner')!), 'atlas001');
    assert.deepEqual(children(ca, 'OtherInfo'), [
      'SubmittedVia=org.nordugrid.arcrest',
      ...fqans.map((f) => `VOMSFQAN=${f}`),
    ]);
    const plain = activityDocument(store.get('plain')!, opts).element();
    assert.equal(firstChild(plain, 'LocalOwner'), undefined);
    assert.deepEqual(children(plain, 'OtherInfo'), ['SubmittedVia=org.nordugrid.arcrest']);
  });

  it('the account is handed to the batch backend', () => {
    assert.equal(batchSpec(store.get('mapped')!, ctx).localAccount, 'atlas001');
    assert.equal('localAccount' in batchSpec(store.get('plain')!, ctx), false);
  });

  it('a job stored without an account runs as the default account of a root service, never as root', () => {
    const root = { ...ctx, defaultAccount: 'nobody' };
    assert.equal(batchSpec(store.get('plain')!, root).localAccount, 'nobody');
    assert.equal(batchSpec(store.get('mapped')!, root).localAccount, 'atlas001', 'a mapped account is kept');
  });
});
