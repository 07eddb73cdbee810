import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyCounters, tallyJobs, type JobTallyEntry } from '../../src/info/job-tally.js';

test('no jobs: every counter is zero and no queue has an entry', () => {
  const t = tallyJobs([]);
  assert.deepEqual(t.all, emptyCounters());
  assert.equal(t.byQueue.size, 0);
});

test('each state lands in the counter A-REX puts it in', () => {
  const jobs: JobTallyEntry[] = [
    { gmState: 'ACCEPTED', queue: 'a' },
    { gmState: 'ACCEPTED', pending: true, queue: 'a', slots: 4 },
    { gmState: 'PREPARING', queue: 'a' },
    { gmState: 'PREPARING', pending: true, queue: 'a' },
    { gmState: 'SUBMIT', queue: 'a', slots: 2 },
    { gmState: 'INLRMS', lrmsState: 'Q', queue: 'b', slots: 3 },
    { gmState: 'INLRMS', lrmsState: 'R', queue: 'b', slots: 2 },
    { gmState: 'INLRMS', lrmsState: 'S', queue: 'b' },
    { gmState: 'INLRMS', pending: true, queue: 'b' },
    { gmState: 'FINISHING', queue: 'b' },
    { gmState: 'CANCELING', queue: 'b' },
    { gmState: 'FINISHED', queue: 'b' },
    { gmState: 'DELETED', queue: 'b' },
  ];
  const t = tallyJobs(jobs);
  assert.deepEqual(t.all, {
    total: 11, // all but FINISHED and DELETED
    preLrmsWaiting: 2,
    staging: 6, // 2 PREPARING, SUBMIT, pending INLRMS, FINISHING, CANCELING
    running: 1,
    suspended: 1,
    waiting: 1,
    usedSlots: 2,
    requestedSlots: 1 + 4 + 1 + 1 + 2 + 3,
  });
  assert.deepEqual(t.byQueue.get('a'), {
    ...emptyCounters(),
    total: 5,
    preLrmsWaiting: 2,
    staging: 3,
    requestedSlots: 9,
  });
  assert.deepEqual(t.byQueue.get('b'), {
    ...emptyCounters(),
    total: 6,
    staging: 3,
    running: 1,
    suspended: 1,
    waiting: 1,
    usedSlots: 2,
    requestedSlots: 3,
  });
});

test('INLRMS jobs with batch state E, O, EXECUTED or unknown count in total only', () => {
  const t = tallyJobs([
    { gmState: 'INLRMS', lrmsState: 'E' },
    { gmState: 'INLRMS', lrmsState: 'O' },
    { gmState: 'INLRMS', lrmsState: 'EXECUTED' },
    { gmState: 'INLRMS' },
  ]);
  assert.deepEqual(t.all, { ...emptyCounters(), total: 4 });
});

test('finished jobs are not counted at all (A-REX TotalJobs excludes them)', () => {
  const t = tallyJobs([
    { gmState: 'FINISHED', queue: 'q' },
    { gmState: 'FINISHED', queue: 'q', pending: true },
  ]);
  assert.deepEqual(t.all, emptyCounters());
  assert.deepEqual(t.byQueue.get('q'), emptyCounters());
});

test('bad slot counts fall back to one slot', () => {
  const t = tallyJobs([
    { gmState: 'INLRMS', lrmsState: 'R', slots: 0 },
    { gmState: 'INLRMS', lrmsState: 'R', slots: -3 },
    { gmState: 'INLRMS', lrmsState: 'R', slots: Number.NaN },
    { gmState: 'INLRMS', lrmsState: 'R', slots: 2.7 },
  ]);
  assert.equal(t.all.usedSlots, 1 + 1 + 1 + 2);
});

test('jobs without a queue count in the totals only; queue names are map keys, not object keys', () => {
  const t = tallyJobs([
    { gmState: 'ACCEPTED' },
    { gmState: 'ACCEPTED', queue: '__proto__' },
    { gmState: 'ACCEPTED', queue: 'constructor' },
  ]);
  assert.equal(t.all.total, 3);
  assert.equal(t.byQueue.size, 2);
  assert.equal(t.byQueue.get('__proto__')?.total, 1);
  assert.equal(t.byQueue.get('constructor')?.total, 1);
});
