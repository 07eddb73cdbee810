/**
 * Single-job submissions from 64 concurrent clients (each its own kept-alive TLS
 * connection, opened before the clock starts): jobs/s over the whole batch, and the
 * latency of each POST. Jobs are killed afterwards, cleaned at the end of the run.
 */
import { performance } from 'node:perf_hooks';
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { SampleBuffer, summarize } from '../harness/stats.js';
import { killJobs } from '../harness/cleanup.js';
import { singleBody } from '../harness/job-bodies.js';
import { createdIds, tallyText } from '../harness/answers.js';
import { BenchError } from '../harness/failures.js';
import { contentTypeOf } from './job-supply.js';
import { formatNumber } from '../harness/render.js';

export const concurrentSubmitScenario: Scenario = {
  name: 'concurrent-submit',
  title: 'single-job submissions from concurrent clients',
  async measure(run: ScenarioRun) {
    const s = run.session;
    const total = run.counts.concurrentJobs;
    const clients = run.counts.concurrentClients;
    const pool = s.client.withConnections(clients);
    const ct = contentTypeOf(s.options.format);
    try {
      // Open every connection first: the handshakes are not what this measures.
      await Promise.all(Array.from({ length: clients }, () => pool.request('GET', `${pool.servicePath}/rest`)));
      const lat = new SampleBuffer();
      const ids: string[] = [];
      const failures = new Map<string, number>();
      let next = 0;
      const t0 = performance.now();
      const worker = async (): Promise<void> => {
        while (next < total) {
          const i = next++;
          const { items, ms } = await pool.submit(singleBody(s.options.format, 'trivial', `bench-conc-${i}`), ct);
          lat.push(ms);
          const c = createdIds(items);
          ids.push(...c.ids);
          for (const [k, v] of c.failures) failures.set(k, (failures.get(k) ?? 0) + v);
          if (Date.now() > run.deadline) return;
          run.progress(`${formatNumber(lat.length)}/${formatNumber(total)} jobs`);
        }
      };
      const results = await Promise.allSettled(Array.from({ length: clients }, worker));
      const wall = (performance.now() - t0) / 1000;
      s.tracker.add(ids);
      if (s.shared.storeCount !== undefined) s.shared.storeCount += ids.length;
      const err = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (err) throw err.reason;
      if (ids.length === 0) throw new BenchError('http', `no job was created: ${tallyText(failures)}`);
      const l = summarize(lat.values());
      run.param('jobs', lat.length);
      run.param('clients', clients);
      run.metric('jobs_per_s', 'jobs/s', ids.length / wall, 'jobs/s', 'higher');
      run.metric('p50_ms', 'p50 latency', l.p50, 'ms', 'lower');
      run.metric('p99_ms', 'p99 latency', l.p99, 'ms', 'lower');
      if (failures.size > 0) run.note(`refused: ${tallyText(failures)}`);
      if (lat.length < total) {
        run.result.status = 'partial';
        run.result.reason = `time budget spent after ${lat.length} of ${total} submissions`;
      }
      run.progress(`killing ${ids.length} jobs`, true);
      await killJobs(s.client, ids);
    } finally {
      await pool.close();
    }
  },
};
