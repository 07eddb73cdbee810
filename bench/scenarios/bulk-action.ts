/**
 * `POST jobs?action=status` and `action=info` with 1,000 ids in one call (what aCT and
 * arcstat do for a user with many jobs). The ids are jobs killed at submission and ended, made before
 * the quiet wait; the median call time over the repeats, after the warm-up calls, is reported.
 */
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { BenchError } from '../harness/failures.js';
import { summarize } from '../harness/stats.js';
import { ensurePool } from './job-supply.js';

/**
 * Calls before the measured ones, the same for both endpoints. A call takes a millisecond
 * or two on Ceres, and a JIT-compiled server runs its first few hundred calls after a
 * start partly in code not yet optimised: on the test machine, calls 1-50 of a fresh
 * service took 2.3-2.6 ms (3.6 ms of server CPU each) and later blocks of 50 1.2-2.1 ms
 * (docs/performance.md, "status: the warm-up"). A polling client meets a service that has
 * been up for hours, so the figure is taken after `actionWarmups` calls (200 in the full
 * run), or after WARMUP_MAX_MS of them when the endpoint is slow. The median of warm-up
 * calls 11-110, the figure of the harness before (10 warm-up calls, then 100), is kept as
 * a second figure.
 */
const WARMUP_MAX_MS = 10_000;
/** The warm-up calls that make the earlier figure: after 10, the next 100. */
const COLD_FROM = 10;
const COLD_CALLS = 100;

function bulkAction(action: 'status' | 'info'): Scenario {
  return {
    name: action,
    title: `action=${action} for many ids in one call`,
    async prepare(run: ScenarioRun) {
      await ensurePool(run, run.counts.actionIds);
    },
    async measure(run: ScenarioRun) {
      const n = run.counts.actionIds;
      const ids = await ensurePool(run, n);
      const c = run.session.client;
      // Warm-up with the full list: the connection, the server's caches and, for a
      // JIT-compiled server, optimised code for this path. Timed only for the second figure.
      const warm: number[] = [];
      const warmStart = Date.now();
      while (warm.length < Math.max(COLD_FROM, run.counts.actionWarmups)) {
        if (warm.length >= COLD_FROM && Date.now() - warmStart >= WARMUP_MAX_MS) break;
        warm.push((await c.action(action, ids)).ms);
      }
      const ms: number[] = [];
      let bytes = 0;
      try {
        for (let i = 0; i < run.counts.actionRuns; i++) {
          run.checkBudget(`after ${i} of ${run.counts.actionRuns} calls`);
          run.progress(`call ${i + 1}/${run.counts.actionRuns} with ${n} ids`);
          const r = await c.action(action, ids);
          const ok = r.items.filter((it) => it.status === 200).length;
          if (r.items.length !== n || ok !== n) {
            throw new BenchError(
              'http',
              `action=${action} with ${n} ids answered ${r.items.length} items, ${ok} with status 200`,
            );
          }
          ms.push(r.ms);
          bytes = r.bytes;
        }
      } catch (e) {
        if (!(e instanceof BenchError && e.kind === 'budget') || ms.length === 0) throw e;
        run.result.status = 'partial';
        run.result.reason = e.message;
      }
      const s = summarize(ms);
      run.param('ids', n);
      run.param('calls', ms.length);
      run.metric('call_s', `seconds per call (${n} ids)`, s.p50 / 1000, 's', 'lower');
      run.metric('ids_per_s', 'ids/s', (n * 1000) / s.p50, 'ids/s', 'higher', false);
      run.note(
        `min ${(s.min / 1000).toFixed(3)} s, max ${(s.max / 1000).toFixed(3)} s over ${s.n} calls; answer ${Math.round(bytes / 1024)} KiB`,
      );
      const cold = warm.slice(COLD_FROM, COLD_FROM + COLD_CALLS);
      run.param('warm-up calls', warm.length);
      if (cold.length > 0) {
        run.metric(
          'cold_call_s',
          `seconds per call, warm-up calls ${COLD_FROM + 1}-${COLD_FROM + cold.length}`,
          summarize(cold).p50 / 1000,
          's',
          'lower',
        );
      }
    },
  };
}

export const statusScenario = bulkAction('status');
export const infoScenario = bulkAction('info');
