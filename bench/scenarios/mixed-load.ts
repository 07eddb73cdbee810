/**
 * Mixed traffic from 64 concurrent clients (one kept-alive connection each) for 60 s:
 * a quarter each of GET /rest (versions), GET jobs (the user's ~1,000 jobs, killed and ended),
 * action=status for 10 ids and action=info for 1 id, in a fixed rotation so every run
 * sends the same mix. Requests/s, latency percentiles, errors (a non-2xx answer or a
 * transport failure). The load generator runs on the same cores as the server, so
 * the rate is what this machine does with a local client; server CPU per request is
 * the portable figure.
 */
import { performance } from 'node:perf_hooks';
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { SampleBuffer, summarize } from '../harness/stats.js';
import { idListJson } from '../harness/job-bodies.js';
import { cpuSeconds } from '../harness/proc.js';
import { ensurePool } from './job-supply.js';
import { BenchError, shortReason } from '../harness/failures.js';
import { formatNumber } from '../harness/render.js';
import type { ArcClient } from '../harness/client.js';

const KINDS = ['versions', 'list', 'status', 'info'] as const;
type Kind = (typeof KINDS)[number];

interface Req {
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
}

function requestFor(kind: Kind, c: ArcClient, ids: readonly string[], i: number): Req {
  switch (kind) {
    case 'versions':
      return { method: 'GET', path: `${c.servicePath}/rest` };
    case 'list':
      return { method: 'GET', path: `${c.restBase}/jobs` };
    case 'status': {
      const from = (i * 10) % Math.max(1, ids.length - 10);
      return {
        method: 'POST',
        path: `${c.restBase}/jobs?action=status`,
        body: idListJson(ids.slice(from, from + 10)),
        contentType: 'application/json',
      };
    }
    case 'info':
      return {
        method: 'POST',
        path: `${c.restBase}/jobs?action=info`,
        body: idListJson([ids[i % ids.length] as string]),
        contentType: 'application/json',
      };
  }
}

export const mixedLoadScenario: Scenario = {
  name: 'mixed-load',
  title: 'mixed traffic from concurrent clients',
  async prepare(run: ScenarioRun) {
    await ensurePool(run, Math.min(run.counts.actionIds, 1000));
  },
  async measure(run: ScenarioRun) {
    const s = run.session;
    const ids = await ensurePool(run, Math.min(run.counts.actionIds, 1000));
    const clients = run.counts.mixedClients;
    const durationMs = run.counts.mixedSeconds * 1000;
    if (run.timeLeftS() * 1000 < durationMs + 10_000)
      throw new BenchError('budget', `the time budget is shorter than the ${run.counts.mixedSeconds} s run`);
    const pool = s.client.withConnections(clients);
    try {
      await Promise.all(Array.from({ length: clients }, () => pool.request('GET', `${pool.servicePath}/rest`)));
      const lat = new SampleBuffer();
      const perKind = new Map<Kind, SampleBuffer>(KINDS.map((k) => [k, new SampleBuffer()]));
      const errors = new Map<string, number>();
      let errorCount = 0;
      let n = 0;
      const cpu0 = await cpuSeconds(s.pids);
      const t0 = performance.now();
      const end = t0 + durationMs;
      const worker = async (w: number): Promise<void> => {
        for (let i = 0; performance.now() < end; i++) {
          const kind = KINDS[(w + i) % KINDS.length] as Kind;
          const q = requestFor(kind, pool, ids, w * 7919 + i);
          try {
            const a = await pool.request(q.method, q.path, {
              ...(q.body !== undefined ? { body: q.body } : {}),
              ...(q.contentType !== undefined ? { contentType: q.contentType } : {}),
              discardBody: true,
            });
            lat.push(a.ms);
            perKind.get(kind)?.push(a.ms);
            n++;
            if (a.status < 200 || a.status > 299) {
              errorCount++;
              const k = `${kind}: HTTP ${a.status}`;
              errors.set(k, (errors.get(k) ?? 0) + 1);
            }
          } catch (e) {
            errorCount++;
            const k = `${kind}: ${shortReason(e).slice(0, 80)}`;
            errors.set(k, (errors.get(k) ?? 0) + 1);
          }
          if (w === 0)
            run.progress(
              `${formatNumber((performance.now() - t0) / 1000)}/${run.counts.mixedSeconds} s, ${formatNumber(n)} requests, ${errorCount} errors`,
            );
        }
      };
      await Promise.all(Array.from({ length: clients }, (_, w) => worker(w)));
      const wall = (performance.now() - t0) / 1000;
      const cpu1 = await cpuSeconds(s.pids);
      const l = summarize(lat.values());
      run.param('clients', clients);
      run.param('seconds', run.counts.mixedSeconds);
      run.param('jobs listed', ids.length);
      run.metric('req_per_s', 'requests/s', n / wall, 'req/s', 'higher');
      run.metric('p50_ms', 'p50 latency', l.p50, 'ms', 'lower');
      run.metric('p99_ms', 'p99 latency', l.p99, 'ms', 'lower');
      run.metric('errors', 'errors', errorCount, '', 'lower', false);
      if (cpu0 !== undefined && cpu1 !== undefined && n > 0)
        run.metric('server_cpu_us', 'server CPU per request', ((cpu1 - cpu0) * 1e6) / n, 'µs', 'lower');
      run.note(
        `p50 by kind: ${KINDS.map((k) => `${k} ${formatNumber(summarize(perKind.get(k)?.values() ?? []).p50)} ms`).join(', ')}`,
      );
      if (errors.size > 0) run.note(`errors: ${[...errors.entries()].map(([k, v]) => `${v} × ${k}`).join('; ')}`);
    } finally {
      await pool.close();
    }
  },
};
