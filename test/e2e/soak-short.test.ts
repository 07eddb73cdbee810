// A short soak: 16 clients of two users for ~30 s of mixed work against the real
// service (submissions, status, info, uploads and aborted uploads, downloads, kills,
// cleans, listings). The full run is the bench scenario `soak` (docs/performance.md).
// One run, then one check per test: the service never died, no answer was a 5xx, no
// request went unanswered, every acknowledged job exists and ends, none ran twice,
// and the memory after the warm-up stays bounded (generous for so short a run).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { verdictProblems } from '../../bench/soak/verify.js';
import { crashText, runText, shortSoak, type ShortRun } from '../helpers/soak.js';

describe('soak, short', { timeout: 600_000 }, () => {
  let run: ShortRun;
  before(async () => {
    run = await shortSoak({ clients: 16, seconds: 30, warmupS: 10, settleS: 120 });
  });
  after(() => run?.cleanup());

  it('did real work', () => {
    const r = run.report;
    assert.ok(r.verdict.acknowledged >= 50, runText(r));
    assert.ok(r.abortedUploads >= 3, runText(r));
  });

  it('the service never exited by itself', () => {
    assert.equal(run.report.crashes.length, 0, `${crashText(run.report)}\nservice log:\n${run.logErrors()}`);
  });

  it('no answer was a 5xx (requests and bulk items)', () => {
    assert.equal(run.report.fiveXx, 0, `${run.report.fiveXxText}\nservice log:\n${run.logErrors()}`);
  });

  it('every request got an HTTP answer', () => {
    assert.equal(run.report.transportFailures, 0, run.report.transportText);
  });

  it('every acknowledged job exists, ends, and ran at most once (FINISHED: exactly once)', () => {
    assert.deepEqual(verdictProblems(run.report.verdict), [], runText(run.report));
  });

  // A production client cleans what it has seen end, and the mix's clients do: the jobs
  // stored stay level through the run instead of growing with it, which is what lets the
  // memory check below measure the service rather than the store's growth.
  it('the clients clean the jobs they saw end: few stay stored', () => {
    const v = run.report.verdict;
    const left = v.acknowledged - v.cleaned;
    assert.ok(left <= 16 * 8, `${left} of ${v.acknowledged} jobs not cleaned\n${runText(run.report)}`);
  });

  // A bound for gross leaks only: under load the process keeps memory it freed (V8 pages,
  // the malloc heap; docs/performance.md, "Soak memory"), which a short run on a busy
  // machine cannot tell from growth. The full soak reports the 10 % target.
  it('RSS after the warm-up grows by at most 50 % or 100 MiB', () => {
    const g = run.report.rss.growth;
    const gone = run.report.serviceGoneAfterS;
    assert.ok(
      g !== undefined,
      `RSS not measured after the warm-up${gone !== undefined ? ` (the service was gone ${gone} s into the run)` : ''}`,
    );
    assert.ok(
      g.growthPct <= 50 || g.growthMiB <= 100,
      `RSS ${g.warmMiB} MiB after the warm-up, ${g.endMiB} MiB at the end (+${g.growthPct} %)`,
    );
  });
});
