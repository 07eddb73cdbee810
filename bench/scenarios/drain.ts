/**
 * Drain: submit many trivial jobs at once (bulk POSTs of up to 1,000) and time until
 * `action=status` reports every one ended. Endpoints may get different job counts
 * (A-REX needs about half a second per job); the per-job figure is what compares.
 * Polls every 1/50 of the elapsed time (10 ms to 1 s).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { chunks } from '../harness/job-bodies.js';
import { FINAL_STATES } from '../harness/answers.js';
import { BULK_CHUNK, submitBulk } from './job-supply.js';
import { formatNumber } from '../harness/render.js';

export function drainPollMs(elapsedMs: number): number {
  return Math.min(1000, Math.max(10, elapsedMs / 50));
}

export const drainScenario: Scenario = {
  name: 'drain',
  title: 'drain: many trivial jobs submitted at once, until all ended',
  async measure(run: ScenarioRun) {
    const s = run.session;
    const n = run.counts.drainJobs;
    const c = s.client;
    const t0 = performance.now();
    const pending = new Set<string>();
    for (let done = 0; done < n;) {
      const want = Math.min(BULK_CHUNK, n - done);
      const { ids } = await submitBulk(run, c, 'trivial', want, `bench-drain-${done}`);
      for (const id of ids) pending.add(id);
      done += want;
    }
    const total = pending.size;
    const submitS = (performance.now() - t0) / 1000;
    const ended = new Map<string, number>();
    while (pending.size > 0) {
      if (Date.now() > run.deadline) break;
      for (const ch of chunks([...pending], 1000)) {
        const { items } = await c.action('status', ch);
        for (const it of items) {
          if (it.id !== undefined && it.state !== undefined && FINAL_STATES.has(it.state) && pending.delete(it.id)) {
            ended.set(it.state, (ended.get(it.state) ?? 0) + 1);
          }
        }
      }
      const el = performance.now() - t0;
      run.progress(
        `${formatNumber(total - pending.size)}/${formatNumber(total)} ended after ${formatNumber(el / 1000)} s`,
      );
      if (pending.size > 0) await sleep(drainPollMs(el));
    }
    const wall = (performance.now() - t0) / 1000;
    run.param('jobs', total);
    run.note(
      `submission took ${formatNumber(submitS)} s; ended: ${[...ended.entries()].map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}`,
    );
    const done = total - pending.size;
    if (pending.size > 0) {
      run.result.status = 'partial';
      run.result.reason = `${pending.size} of ${total} jobs had not ended after ${formatNumber(wall)} s (time budget)`;
      if (done === 0) return;
    }
    run.metric('jobs_per_s', 'jobs/s drained', done / wall, 'jobs/s', 'higher');
    run.metric('ms_per_job', 'time per job', (wall * 1000) / done, 'ms', 'lower', false);
    run.metric('total_s', 'time to drain all', wall, 's', 'lower', false);
  },
};
