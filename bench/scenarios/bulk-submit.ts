/**
 * Bulk submission: 1,000 trivial jobs in one POST (multi-xRSL `+(...)(...)` or ADL
 * `<ActivityDescriptions>`), repeated; jobs/s of the median POST.
 *
 * The jobs are killed right after each POST (outside the timing) so the endpoint does
 * not spend the rest of the run executing them; they are cleaned only at the end of
 * the run, because deleting thousands of job directories makes new ones slow to create
 * on this machine's ext4 for minutes (measured), which would slow
 * down whatever is measured next.
 *
 * One untimed POST of the same size comes first, on both endpoints, as the id-list
 * scenarios' warm-up calls do (bulk-action.ts): the first submission after start pays the
 * JIT compilation of the submission path and the connection's first use, which a service
 * that has been taking jobs has long paid (measured: 155 ms against 64 ms for the third).
 */
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { summarize } from '../harness/stats.js';
import { killJobs } from '../harness/cleanup.js';
import { submitBulk } from './job-supply.js';
import { BenchError } from '../harness/failures.js';

const WARMUP_POSTS = 1;

export const bulkSubmitScenario: Scenario = {
  name: 'bulk-submit',
  title: 'bulk submission of trivial jobs in one POST',
  async measure(run: ScenarioRun) {
    const n = run.counts.bulkJobs;
    const c = run.session.client;
    const rates: number[] = [];
    const secs: number[] = [];
    let failed = 0;
    for (let i = 0; i < WARMUP_POSTS; i++) {
      run.progress(`warm-up POST of ${n} jobs (not timed)`, true);
      const w = await submitBulk(run, c, 'trivial', n, `bench-bulk-warmup-${i}`);
      await killJobs(c, w.ids);
    }
    try {
      for (let i = 0; i < run.counts.bulkRuns; i++) {
        run.checkBudget(`after ${i} of ${run.counts.bulkRuns} POSTs`);
        await run.quiet();
        run.progress(`POST ${i + 1}/${run.counts.bulkRuns} of ${n} jobs`, true);
        const r = await submitBulk(run, c, 'trivial', n, `bench-bulk-${i}`);
        failed += r.failed;
        rates.push((r.ids.length * 1000) / r.ms);
        secs.push(r.ms / 1000);
        run.progress(`killing the ${r.ids.length} jobs of POST ${i + 1}`, true);
        await killJobs(c, r.ids);
      }
    } catch (e) {
      if (!(e instanceof BenchError && e.kind === 'budget') || rates.length === 0) throw e;
      run.result.status = 'partial';
      run.result.reason = e.message;
    }
    const rate = summarize(rates);
    run.param('jobs per POST', n);
    run.param('POSTs', rates.length);
    run.param('warm-up POSTs (not timed)', WARMUP_POSTS);
    run.metric('jobs_per_s', 'jobs/s', rate.p50, 'jobs/s', 'higher');
    run.metric('post_s', `seconds per POST (${n} jobs)`, summarize(secs).p50, 's', 'lower', false);
    if (rates.length > 1)
      run.note(`jobs/s min ${Math.round(rate.min)}, max ${Math.round(rate.max)} over ${rates.length} POSTs`);
    if (failed > 0) run.note(`${failed} descriptions were refused`);
  },
};
