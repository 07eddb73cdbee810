/**
 * The big store: `GET jobs` with 100,000 jobs stored (with and without a `state`
 * filter), and the server's resident memory holding them. The store is filled once
 * per endpoint (killed or parked jobs: job-supply.ts), within a fill budget of 3/4 of
 * the scenario budget; an endpoint that cannot take 100,000 jobs in that time is
 * measured at the size it reached, and the note says so.
 */
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { SkipScenario } from '../harness/runner.js';
import { summarize } from '../harness/stats.js';
import { rssMiB } from '../harness/proc.js';
import { ensureStore } from './job-supply.js';
import { formatNumber } from '../harness/render.js';
import { BenchError } from '../harness/failures.js';

/** Seconds without requests before the memory figure is read. */
const SETTLE_S = 20;

async function fill(run: ScenarioRun): Promise<void> {
  await ensureStore(run, run.counts.storeJobs, Math.floor(run.session.options.budgetS * 0.75));
  if (run.session.shared.storeNote) run.note(run.session.shared.storeNote);
}

export const listJobsScenario: Scenario = {
  name: 'list-jobs',
  title: 'GET jobs with a big store',
  prepare: fill,
  async measure(run: ScenarioRun) {
    const c = run.session.client;
    const filter = run.counts.stateFilter;
    const all: number[] = [];
    const filtered: number[] = [];
    let listed = 0;
    let matched = 0;
    try {
      for (let i = 0; i < run.counts.listRuns; i++) {
        run.checkBudget(`after ${i} of ${run.counts.listRuns} listing pairs`);
        run.progress(`GET jobs ${i + 1}/${run.counts.listRuns}`, true);
        const a = await c.list();
        all.push(a.ms / 1000);
        listed = a.jobs.length;
        run.progress(`GET jobs?state=${filter} ${i + 1}/${run.counts.listRuns}`, true);
        const f = await c.list(filter);
        filtered.push(f.ms / 1000);
        matched = f.jobs.length;
      }
    } catch (e) {
      // Out of time with some listings done (a slow endpoint at 100,000 jobs): report those.
      if (!(e instanceof BenchError && e.kind === 'budget') || all.length === 0 || filtered.length === 0) throw e;
      run.result.status = 'partial';
      run.result.reason = e.message;
    }
    run.session.shared.storeCount = listed;
    const sa = summarize(all);
    const sf = summarize(filtered);
    run.param('jobs stored', listed);
    run.param('store kind', run.counts.storeKind);
    // Stores may differ in size between endpoints (A-REX gets fewer): the rate compares.
    run.metric('list_s', 'GET jobs', sa.p50, 's', 'lower', false);
    run.metric('listed_per_s', 'GET jobs: jobs listed/s', listed / sa.p50, 'jobs/s', 'higher');
    run.metric('filtered_s', `GET jobs?state=${filter}`, sf.p50, 's', 'lower');
    run.note(
      `${formatNumber(listed)} jobs listed, ${formatNumber(matched)} matched the filter; medians of ${sa.n} calls each`,
    );
  },
};

export const memoryScenario: Scenario = {
  name: 'memory',
  title: 'server resident memory with a big store',
  async prepare(run: ScenarioRun) {
    if (run.session.pids.length === 0)
      throw new SkipScenario('the server process is unknown: pass --pid (or run on the server machine)');
    await fill(run);
  },
  async measure(run: ScenarioRun) {
    const s = run.session;
    // One listing first, so a server that loads jobs lazily has them in memory.
    const { jobs } = await s.client.list();
    s.shared.storeCount = jobs.length;
    const busy = await rssMiB(s.pids);
    if (busy === undefined) throw new SkipScenario(`cannot read /proc/${s.pids[0]}/status (another user's process?)`);
    // The resident set of a service holding the store, not of one still holding the
    // listing's garbage: read again after SETTLE_S without requests, as the issue's
    // waiting-jobs figure is ("20 s after"). Both endpoints get the same wait.
    run.progress(`RSS right after the listing ${formatNumber(busy)} MiB; ${SETTLE_S} s without requests`, true);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_S * 1000));
    const rss = (await rssMiB(s.pids)) ?? busy;
    run.param('jobs stored', jobs.length);
    run.param('store kind', run.counts.storeKind);
    run.metric('rss_mib', `RSS with the store, ${SETTLE_S} s after the last request`, rss, 'MiB', 'lower');
    run.metric('rss_busy_mib', 'RSS with the store, right after listing it', busy, 'MiB', 'lower', false);
    const before = s.shared.rssBeforeStore;
    if (before !== undefined) {
      run.metric('rss_before_mib', 'RSS before the store was filled', before.mib, 'MiB', 'lower', false);
      const added = jobs.length - before.jobs;
      if (added > 0)
        run.metric('rss_per_job', 'RSS growth per job added', ((rss - before.mib) * 2 ** 20) / added, 'bytes', 'lower');
    }
    if (s.shared.rssStartMiB !== undefined)
      run.note(`RSS at the start of the run ${formatNumber(s.shared.rssStartMiB)} MiB`);
    run.note(`pids ${s.pids.join(', ')} (VmRSS summed)`);
  },
};
