/**
 * Submit → FINISHED as the client sees it (`action=status`), for trivial jobs.
 *
 * Jobs are submitted one at a time, a fixed gap apart (open loop), so on a fast
 * endpoint each job runs alone and on a slow one (A-REX: about a minute each, set by
 * its info provider's cadence) the run still ends in minutes. One poller asks for the
 * status of every job in flight; its interval is 1/20 of the age of the oldest job in
 * flight (5 ms to 500 ms), so the error of a figure is about 5 % and a slow endpoint
 * is not flooded with polls. A job's latency is from the start of its POST to the
 * arrival of the first status answer that says FINISHED.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { summarize } from '../harness/stats.js';
import { singleBody, chunks } from '../harness/job-bodies.js';
import { createdIds, FINAL_STATES, tallyText } from '../harness/answers.js';
import { BenchError } from '../harness/failures.js';
import { contentTypeOf } from './job-supply.js';
import { formatNumber } from '../harness/render.js';

export function pollIntervalMs(oldestAgeMs: number): number {
  return Math.min(500, Math.max(5, oldestAgeMs / 20));
}

export const latencyScenario: Scenario = {
  name: 'latency',
  title: 'submit → FINISHED seen by action=status',
  async measure(run: ScenarioRun) {
    const s = run.session;
    const n = run.counts.latencyJobs;
    const gap = run.counts.latencyGapMs;
    const client = s.client.withConnections(2);
    const inflight = new Map<string, number>();
    const finished: number[] = [];
    const ended = new Map<string, number>();
    const seen = new Set<string>();
    const refused = new Map<string, number>();
    let submitted = 0;
    let submitting = true;
    let stop = false;
    try {
      await client.request('GET', `${client.servicePath}/rest`);
      const t0 = performance.now();
      const submitter = (async () => {
        try {
          for (let i = 0; i < n && !stop; i++) {
            const wait = t0 + i * gap - performance.now();
            if (wait > 0) await sleep(wait);
            const start = performance.now();
            const { items } = await client.submit(
              singleBody(s.options.format, 'trivial', `bench-lat-${i}`),
              contentTypeOf(s.options.format),
            );
            const c = createdIds(items);
            for (const [k, v] of c.failures) refused.set(k, (refused.get(k) ?? 0) + v);
            s.tracker.add(c.ids);
            for (const id of c.ids) inflight.set(id, start);
            submitted++;
          }
        } finally {
          submitting = false;
        }
      })();
      let pollError: { error: unknown } | undefined;
      while (submitting || inflight.size > 0) {
        if (Date.now() > run.deadline) break;
        if (inflight.size === 0) {
          await sleep(2);
          continue;
        }
        const now0 = performance.now();
        let oldest = now0;
        for (const t of inflight.values()) oldest = Math.min(oldest, t);
        try {
          for (const c of chunks([...inflight.keys()], 1000)) {
            const { items } = await client.action('status', c);
            const at = performance.now();
            for (const it of items) {
              if (it.id === undefined || !inflight.has(it.id)) continue;
              if (it.state !== undefined) seen.add(it.state);
              if (it.state !== undefined && FINAL_STATES.has(it.state)) {
                const start = inflight.get(it.id) ?? at;
                inflight.delete(it.id);
                ended.set(it.state, (ended.get(it.state) ?? 0) + 1);
                if (it.state === 'FINISHED') finished.push((at - start) / 1000);
              }
            }
          }
        } catch (e) {
          pollError = { error: e };
          break;
        }
        run.progress(
          `${submitted}/${n} submitted, ${formatNumber(finished.length)} FINISHED, ${inflight.size} in flight`,
        );
        const wait = pollIntervalMs(performance.now() - oldest) - (performance.now() - now0);
        if (wait > 0) await sleep(wait);
      }
      stop = true;
      await submitter;
      if (pollError !== undefined) throw pollError.error;
      run.param('jobs', submitted);
      run.param('gap ms', gap);
      run.note(`states seen: ${[...seen].join(', ') || 'none'}`);
      if (refused.size > 0) run.note(`refused: ${tallyText(refused)}`);
      const notFinished = [...ended.entries()].filter(([k]) => k !== 'FINISHED');
      if (notFinished.length > 0) run.note(`ended otherwise: ${notFinished.map(([k, v]) => `${v} ${k}`).join(', ')}`);
      if (finished.length === 0) {
        throw new BenchError(
          Date.now() > run.deadline ? 'budget' : 'http',
          `no job reached FINISHED${inflight.size ? ` (${inflight.size} still in flight; states seen: ${[...seen].join(', ') || 'none'})` : ''}`,
        );
      }
      const l = summarize(finished);
      run.metric('p50_s', 'p50 submit → FINISHED', l.p50, 's', 'lower');
      run.metric('p99_s', 'p99 submit → FINISHED', l.p99, 's', 'lower');
      run.note(`min ${formatNumber(l.min)} s, max ${formatNumber(l.max)} s over ${l.n} FINISHED jobs`);
      if (inflight.size > 0) {
        run.result.status = 'partial';
        run.result.reason = `${inflight.size} of ${submitted} jobs had not ended when the time budget ran out`;
      }
    } finally {
      stop = true;
      await client.close();
    }
  },
};
