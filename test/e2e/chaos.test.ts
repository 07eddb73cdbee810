// Chaos, short: the soak mix from 16 clients of two users while the service is
// `kill -9`ed every 2-5 s and started again on the same state, for ~40 s. Requests in
// flight at a kill fail without an answer; that is expected and not counted. What is
// checked, after a last restart: no HTTP answer was a 5xx, every restart came up,
// the service never died by itself, and every job acknowledged with 201 exists, ends
// and ran at most once (FINISHED: exactly once). The full run is `bench/chaos.ts`.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { verdictProblems } from '../../bench/soak/verify.js';
import { crashText, runText, shortSoak, type ShortRun } from '../helpers/soak.js';

describe('chaos, short', { timeout: 600_000 }, () => {
  let run: ShortRun;
  before(async () => {
    run = await shortSoak({ clients: 16, seconds: 40, warmupS: 0, settleS: 120, chaos: { minMs: 2000, maxMs: 5000 } });
  });
  after(() => run?.cleanup());

  it('killed the service several times and did real work', () => {
    const r = run.report;
    // At least 3: a loaded machine restarts slowly, and the gaps are random.
    assert.ok((r.chaos?.kills ?? 0) >= 3, runText(r));
    assert.ok(r.verdict.acknowledged >= 30, runText(r));
  });

  it('every restart came up', () => {
    assert.deepEqual(run.report.chaos?.restartFailures, []);
  });

  it('the service never exited by itself', () => {
    assert.equal(run.report.crashes.length, 0, `${crashText(run.report)}\nservice log:\n${run.logErrors()}`);
  });

  it('no HTTP answer was a 5xx (requests and bulk items)', () => {
    assert.equal(run.report.fiveXx, 0, `${run.report.fiveXxText}\nservice log:\n${run.logErrors()}`);
  });

  it('every acknowledged job exists, ends, and ran at most once (FINISHED: exactly once)', () => {
    assert.deepEqual(verdictProblems(run.report.verdict), [], runText(run.report));
  });
});
