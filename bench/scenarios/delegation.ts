/**
 * The first step of an X.509 delegation, `POST delegations?action=new`, as the ARC client
 * does it at every `arcsub`: the service makes an RSA key pair and answers with a
 * certificate request. 30 [10] requests on one connection, one every 500 ms (a user
 * submitting job after job); median and p99 of the answer time. The delegations are
 * deleted afterwards (their requests would lapse on their own).
 */
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { summarize } from '../harness/stats.js';

export const delegationScenario: Scenario = {
  name: 'delegation',
  title: 'X.509 delegation requests (action=new), one at a time',
  async measure(run: ScenarioRun) {
    const c = run.session.client;
    const n = run.counts.delegationRequests;
    const gap = run.counts.delegationGapMs;
    await c.request('GET', `${c.servicePath}/rest`); // the connection, outside the timing
    const ms: number[] = [];
    const ids: string[] = [];
    try {
      for (let i = 0; i < n; i++) {
        run.checkBudget(`after ${i} of ${n} requests`);
        run.progress(`request ${i + 1}/${n}`);
        const r = await c.newDelegation();
        ms.push(r.ms);
        ids.push(r.id);
        if (gap > 0 && i + 1 < n) await new Promise((res) => setTimeout(res, gap));
      }
    } finally {
      let deleted = 0;
      // The interface says 200; A-REX (and Ceres, to match it) answer 202.
      for (const id of ids) {
        const st = (await c.deleteDelegation(id).catch(() => undefined))?.status;
        if (st === 200 || st === 202) deleted++;
      }
      run.note(`${ids.length} delegations made, ${deleted} deleted`);
    }
    const s = summarize(ms);
    run.param('requests', ms.length);
    run.param('gap_ms', gap);
    run.metric('p50_ms', 'p50 answer time', s.p50, 'ms', 'lower');
    run.metric('p99_ms', 'p99 answer time', s.p99, 'ms', 'lower');
    run.note(
      `min ${s.min.toFixed(1)} ms, max ${s.max.toFixed(1)} ms over ${s.n} requests (the first one may find no key made ahead)`,
    );
  },
};
