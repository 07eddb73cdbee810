// The core's job table (src/lrms/core/job-table.ts) without a batch system: a state is
// reported once per change (state, native name or reason; no reason and an empty one are
// the same), nothing after the final update, and a poll's walk over the open jobs skips
// ended ones and is not disturbed by what it does to the table.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BatchUpdate } from '../../src/lrms/backend.js';
import { JobTable } from '../../src/lrms/core/job-table.js';
import { lostResult } from '../../src/lrms/core/job-files.js';
import { until } from './backend.case.js';

function table(): { t: JobTable<object>; updates: string[] } {
  const updates: string[] = [];
  const t = new JobTable<object>({ name: 'test', extra: () => ({}), watch: () => undefined, log: () => undefined });
  t.onUpdate((localId, u: BatchUpdate) => {
    updates.push(u.kind === 'final' ? `${localId} final` : `${localId} ${u.state}/${u.native}/${u.reason ?? '-'}`);
  });
  return { t, updates };
}

describe('the job table', () => {
  it('reports a state once per change of state, native name or reason', async () => {
    const { t, updates } = table();
    const job = t.track({ jobId: 'j1', lrmsDir: '/nonexistent/ceres-test' }, '1');
    t.report(job, 'QUEUING', 'qw');
    t.report(job, 'QUEUING', 'qw', undefined);
    t.report(job, 'QUEUING', 'qw', '');
    t.report(job, 'HELD', 'hqw', 'held');
    t.report(job, 'HELD', 'hqw', 'held');
    t.report(job, 'HELD', 'hqw', 'held by the operator');
    t.report(job, 'RUNNING', 'r');
    t.report(job, 'RUNNING', 'Rr');
    t.report(job, 'RUNNING', 'Rr');
    await until('five updates', () => updates.length === 5, 5_000);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(updates, [
      '1 QUEUING/qw/-',
      '1 HELD/hqw/held',
      '1 HELD/hqw/held by the operator',
      '1 RUNNING/r/-',
      '1 RUNNING/Rr/-',
    ]);
  });

  it('nothing after the final update; the walk over open jobs skips it', async () => {
    const { t, updates } = table();
    const a = t.track({ jobId: 'a', lrmsDir: '/nonexistent/ceres-a' }, 'a');
    const b = t.track({ jobId: 'b', lrmsDir: '/nonexistent/ceres-b' }, 'b');
    await t.finish(a, lostResult('gone'));
    t.report(a, 'RUNNING', 'r');
    const seen: string[] = [];
    // Ending a job during the walk does not disturb it.
    t.forEachOpen((j) => {
      seen.push(j.localId);
      void t.finish(j, lostResult('gone'));
    });
    assert.deepEqual(seen, ['b']);
    await until('two finals', () => updates.filter((u) => u.endsWith('final')).length === 2, 5_000);
    assert.deepEqual(updates, ['a final', 'b final']);
    assert.equal(b.ended, true);
    assert.equal(t.jobs.size, 0, 'both left the table');
  });
});
