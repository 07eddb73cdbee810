// Why a job waits (src/jobs/wait-reason.ts): the first thing that holds the job, with the
// limit's key and value, from counts read once (never per job); the batch system's reason
// once there; nothing for a job that does not wait. The counts of `ceres admin show` come
// from one grouped statement over the stored jobs and agree with the engine's rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../src/config/load.js';
import { countsFromRows, waitReason, waitReasonIsLive, type WaitCounts } from '../../src/jobs/wait-reason.js';
import type { JobRecord } from '../../src/store/job-record.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { activeJobCounts } from '../../src/store/wait-counts.js';
import { newJobRow } from '../helpers/new-job.js';

type Job = Parameters<typeof waitReason>[0];
const job = (over: Partial<JobRecord>): Job => ({
  id: 'j',
  owner: 'alice',
  state: 'PREPARING',
  pending: true,
  lrmsState: null,
  batchReason: null,
  route: { name: 'r' },
  fqans: ['/atlas/Role=production'],
  restState: 'PREPARED',
  ...over,
});
const counts = (over: Partial<WaitCounts> = {}): WaitCounts => ({
  inBatch: 0,
  inBatchOf: () => 0,
  inBatchOfRoute: () => 0,
  preparing: 0,
  activeOf: () => 0,
  ...over,
});
const config = buildConfig({
  engine: { maxRunningJobs: 10, maxRunningJobsPerUser: 3, maxPreparingJobs: 2, maxJobsPerUser: 5, maxFinishingJobs: 4 },
  routes: [{ name: 'r', match: {}, maxRunning: 6, maxRunningPerVo: 2 }],
});

test('a held job names the first limit reached, route limits first, with its value and count', () => {
  const perRoute = (route: string, vo?: string) => (vo === undefined ? 6 : vo === 'atlas' ? 2 : 0);
  assert.equal(
    waitReason(job({}), config, counts({ inBatchOfRoute: perRoute, inBatch: 10 })),
    'held by route r maxRunning 6 (6 in the batch system)',
  );
  assert.equal(
    waitReason(job({}), config, counts({ inBatchOfRoute: (r, vo) => (vo === 'atlas' ? 2 : 1) })),
    'held by route r maxRunningPerVo 2 for VO atlas (2 in the batch system)',
  );
  assert.equal(
    waitReason(job({ fqans: [] }), config, counts({ inBatchOfRoute: (r, vo) => (vo === '' ? 2 : 0) })),
    'held by route r maxRunningPerVo 2 for VO (none) (2 in the batch system)',
  );
  assert.equal(
    waitReason(job({}), config, counts({ inBatch: 10 })),
    'waiting for a batch slot: engine.maxRunningJobs 10 reached',
  );
  assert.equal(
    waitReason(job({}), config, counts({ inBatchOf: (o) => (o === 'alice' ? 3 : 0) })),
    "held by engine.maxRunningJobsPerUser 3 (3 of this user's in the batch system)",
  );
  assert.equal(waitReason(job({}), config, counts()), 'waiting for its turn (fairShare.by user)');
  // Routes not counted by the engine (no route limit at its start): no route limit holds.
  assert.equal(
    waitReason(job({}), config, counts({ inBatchOfRoute: () => undefined })),
    'waiting for its turn (fairShare.by user)',
  );
});

test('before stage-in: the preparing limit, the user limit, or its turn', () => {
  const accepted = job({ state: 'ACCEPTED', pending: true, restState: 'ACCEPTED' });
  assert.equal(
    waitReason(accepted, config, counts({ preparing: 2 })),
    'waiting to start preparing: engine.maxPreparingJobs 2 reached',
  );
  assert.equal(
    waitReason(accepted, config, counts({ activeOf: () => 5 })),
    "held by engine.maxJobsPerUser 5 (5 of this user's jobs active)",
  );
  assert.equal(waitReason(accepted, config, counts()), 'waiting for its turn to start preparing');
  assert.equal(waitReason(job({ state: 'ACCEPTED', pending: false }), config, counts()), undefined, 'no maxActiveJobs');
});

test("in stage-in: the client's uploads, a staging slot, or downloading", () => {
  const prep = job({ state: 'PREPARING', pending: false, restState: 'PREPARING' });
  assert.equal(
    waitReason(prep, config, counts({ waitsForUploads: (id) => id === 'j' })),
    'waiting for its input files to be uploaded by the client',
  );
  const busy = { active: 10, queued: 4, limit: 10 };
  assert.equal(
    waitReason(prep, config, counts({ waitsForUploads: () => false, stageInSlots: busy })),
    'preparing: downloading its input files, or waiting for a staging slot (staging.maxJobsStagingIn 10, 4 jobs waiting for one)',
  );
  assert.equal(
    waitReason(prep, config, counts({ waitsForUploads: () => false, stageInSlots: { ...busy, queued: 0 } })),
    'preparing: downloading its input files',
  );
  assert.equal(
    waitReason(prep, config, counts()),
    'preparing: its input files are being downloaded or uploaded by the client',
    'without the engine: both',
  );
});

test("in the batch system: its state and the batch system's reason; running, ended or submitting: nothing", () => {
  const q = job({ state: 'INLRMS', pending: false, lrmsState: 'QUEUING', restState: 'QUEUING' });
  assert.equal(waitReason(q, config, counts()), 'in the batch system: QUEUING');
  assert.equal(
    waitReason({ ...q, batchReason: 'Resources' }, config, counts()),
    "in the batch system: QUEUING, the batch system's reason: Resources",
  );
  assert.equal(waitReason({ ...q, lrmsState: 'RUNNING', batchReason: 'Resources' }, config, counts()), undefined);
  assert.equal(
    waitReason({ ...q, pending: true }, config, counts()),
    'waiting for a stage-out slot: engine.maxFinishingJobs 4 reached',
  );
  for (const state of ['SUBMIT', 'FINISHING', 'FINISHED', 'DELETED', 'CANCELING'] as const)
    assert.equal(waitReason(job({ state, pending: false }), config, counts()), undefined, state);
  assert.equal(waitReasonIsLive(q), false, 'its reason is in its record');
  assert.equal(waitReasonIsLive(job({})), true);
});

test('the stored counts: one statement, counted as the engine counts', async () => {
  const root = await mkdtemp(join(tmpdir(), 'ceres-wait-'));
  const db = openDatabase(join(root, 'db'));
  try {
    const store = new JobStore(db);
    const at = (id: string, owner: string, state: string, fqans: string[] = []) =>
      newJobRow(id, owner, { state, fqans, route: { name: 'r' } });
    store.insertMany([
      at('a', 'alice', 'INLRMS', ['/atlas']),
      at('b', 'alice', 'SUBMIT', ['/atlas/Role=x']),
      at('c', 'bob', 'INLRMS', ['/cms']),
      at('d', 'bob', 'PREPARING'),
      at('e', 'bob', 'ACCEPTED'),
      at('f', 'bob', 'FINISHED'),
      at('g', 'bob', 'INLRMS'),
    ]);
    // Pending flags, which a submission does not give: g waits for a stage-out slot (not in the batch system).
    assert.ok(store.update(store.get('e')!, { pending: true }));
    assert.ok(store.update(store.get('g')!, { pending: true }));
    const n = countsFromRows(activeJobCounts(db));
    assert.equal(n.inBatch, 3);
    assert.equal(n.inBatchOf('alice'), 2);
    assert.equal(n.inBatchOfRoute('r'), 3);
    assert.equal(n.inBatchOfRoute('r', 'atlas'), 2);
    assert.equal(n.inBatchOfRoute('r', 'cms'), 1);
    assert.equal(n.inBatchOfRoute('other'), 0);
    assert.equal(n.preparing, 1);
    assert.equal(n.activeOf('bob'), 3, 'INLRMS (pending or not) and PREPARING; ACCEPTED and FINISHED are not');
  } finally {
    db.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('a job behind the submissions under way says so, with their bound; below the bound, or without one, its turn', () => {
  assert.equal(
    waitReason(job({}), config, counts({ submitting: { n: 8, limit: 8 } })),
    'waiting for its turn (fairShare.by user): 8 jobs being submitted to the batch system, at most 8 at once',
  );
  assert.equal(
    waitReason(job({}), config, counts({ submitting: { n: 7, limit: 8 } })),
    'waiting for its turn (fairShare.by user)',
  );
  assert.equal(
    waitReason(job({}), config, counts({ submitting: { n: 40, limit: 0 } })),
    'waiting for its turn (fairShare.by user)',
  );
  // A limit reached comes first: it is what holds the job once a submission is answered.
  assert.equal(
    waitReason(job({}), config, counts({ inBatch: 10, submitting: { n: 8, limit: 8 } })),
    'waiting for a batch slot: engine.maxRunningJobs 10 reached',
  );
});
