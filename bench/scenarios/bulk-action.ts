/**
 * `POST jobs?action=status` and `action=info` with 1,000 ids in one call (what aCT and
 * arcstat do for a user with many jobs). The ids are jobs killed at submission and ended, made before
 * the quiet wait; the median call time over the repeats, after ten untimed calls, is reported.
 */
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { BenchError } from '../harness/failures.js';
import { summarize } from '../harness/stats.js';
import { ensurePool } from './job-supply.js';

/**
 * Untimed calls first. A call takes a millisecond or two on Ceres, and on this class of
 * machine the first few dozen after an idle wait take twice as long as the rest (CPU
 * caches, the JIT, the host's scheduling of an idle guest); 10 warm-up calls and a median
 * over 100 (full run) keep the figure on the steady state a polling client sees.
 */
const WARMUP_CALLS = 10;

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
      // Untimed warm-up with the full list: the connection, the server's caches and, for
      // a JIT-compiled server, optimised code for this path. A production service
      // answers these calls all day; the first few calls after a start are not what its
      // users see. Both endpoints get the same warm-up.
      for (let i = 0; i < WARMUP_CALLS; i++) await c.action(action, ids);
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
    },
  };
}

export const statusScenario = bulkAction('status');
export const infoScenario = bulkAction('info');
