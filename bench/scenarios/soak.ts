/**
 * Soak: 64 clients (two users when the endpoint's CA is a development PKI, whose CA key
 * makes the second) for 10 minutes [quick 2] of the mixed work of bench/soak/mix.ts:
 * submissions, status, info, uploads and aborted uploads, downloads, kills, cleans,
 * listings. Then every acknowledged job is followed to its end and the ledger is read.
 *
 * Figures: requests/s and latency percentiles over every answer, 5xx answers (by route
 * in the notes; target 0), requests without an answer, the server's RSS after the
 * warm-up and at the end (target: within 10 %), and the job checks (acknowledged jobs
 * missing, not ended, run twice; target 0). The scenario fails when a target is missed,
 * with the figures kept.
 *
 * The jobs run a script that appends to a ledger in the harness's temporary directory,
 * so the endpoint must run its jobs on this machine as this user (a local Ceres does).
 */
import { randomBytes } from 'node:crypto';
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { interruption } from '../harness/runner.js';
import { BenchError } from '../harness/failures.js';
import { formatNumber } from '../harness/render.js';
import { processAlive } from '../harness/proc.js';
import { makeLedger } from '../soak/ledger.js';
import { runSoak, type SoakReport } from '../soak/run.js';
import { mixUsers, secondDevUser, type UserFiles } from '../soak/users.js';
import { verdictProblems } from '../soak/verify.js';

/** Longest wait for the jobs to end after the mix (less when the budget is short, never under a minute). */
const SETTLE_S = 180;
const MIN_SETTLE_S = 60;
/** "Flat": RSS at the end within this much of the figure after the warm-up. */
export const SOAK_RSS_PCT = 10;

export const soakScenario: Scenario = {
  name: 'soak',
  title: 'long mixed work from many clients: no 5xx, flat memory, every job once',
  async measure(run: ScenarioRun) {
    const s = run.session;
    const c = run.counts;
    const settleS = Math.min(SETTLE_S, Math.floor(run.timeLeftS() - c.soakSeconds - 30));
    if (settleS < MIN_SETTLE_S)
      throw new BenchError(
        'budget',
        `the time budget (${s.options.budgetS} s) is too short for the ${c.soakSeconds} s soak and its checks: raise --budget`,
      );
    const p = s.init.paths;
    const files: UserFiles[] = [{ name: 'user', cert: p.cert, key: p.key, ca: p.ca }];
    const second = await secondDevUser(p.ca).catch(() => undefined);
    if (second !== undefined) files.push(second);
    else run.note('one user only: the CA given is not a development PKI that can make a second');
    const ledger = await makeLedger(s.tmpDir);
    const users = await mixUsers(s.client.serviceUrl, files, Math.ceil(c.soakClients / files.length), s.client.version);
    let r: SoakReport;
    try {
      r = await runSoak({
        users,
        clients: c.soakClients,
        seconds: c.soakSeconds,
        warmupS: c.soakWarmupS,
        ledger,
        pids: () => s.pids,
        settleS,
        runId: randomBytes(3).toString('hex'),
        interrupted: () => interruption.requested,
        alive: async () => s.pids.length === 0 || (await Promise.all(s.pids.map(processAlive))).every(Boolean),
        cleanAtEnd: s.options.cleanup,
        progress: (t) => run.progress(t),
      });
    } finally {
      for (const u of users) await u.client.close();
    }
    report(run, r);
    const problems = soakProblems(r);
    if (problems.length > 0) throw new BenchError('http', problems.join('; '));
  },
};

/** The targets a soak must meet, as one line per miss. */
export function soakProblems(r: SoakReport): string[] {
  const out: string[] = [];
  if (r.fiveXx > 0) out.push(`${r.fiveXx} answers were 5xx`);
  if (r.transportFailures > 0) out.push(`${r.transportFailures} requests got no answer`);
  if (r.crashes.length > 0) out.push(`the service exited ${r.crashes.length} times by itself`);
  else if (r.serviceGoneAfterS !== undefined)
    out.push(`the service process was gone ${r.serviceGoneAfterS} s into the run`);
  const g = r.rss.growth;
  if (g !== undefined && g.growthPct > SOAK_RSS_PCT)
    out.push(`RSS grew ${g.growthPct} % after the warm-up (${g.warmMiB} → ${g.endMiB} MiB)`);
  return [...out, ...verdictProblems(r.verdict)];
}

function report(run: ScenarioRun, r: SoakReport): void {
  run.param('clients', r.clients);
  run.param('users', r.users);
  run.param('seconds', r.seconds);
  run.param('jobs acknowledged', r.verdict.acknowledged);
  run.param('aborted uploads', r.abortedUploads);
  run.metric('req_per_s', 'requests/s', r.reqPerS, 'req/s', 'higher');
  run.metric('p50_ms', 'p50 latency', r.latencyMs.p50, 'ms', 'lower');
  run.metric('p99_ms', 'p99 latency', r.latencyMs.p99, 'ms', 'lower');
  run.metric('errors_5xx', '5xx answers', r.fiveXx, '', 'lower', false);
  run.metric('no_answer', 'requests without an answer', r.transportFailures, '', 'lower', false);
  const g = r.rss.growth;
  if (g !== undefined) {
    run.metric('rss_warm_mib', 'RSS after warm-up', g.warmMiB, 'MiB', 'lower');
    run.metric('rss_end_mib', 'RSS at the end', g.endMiB, 'MiB', 'lower');
    run.metric('rss_growth_pct', 'RSS growth after warm-up', g.growthPct, '%', 'lower', false);
  }
  const v = r.verdict;
  run.metric('jobs_missing', 'acknowledged jobs missing', v.missing.length, '', 'lower', false);
  run.metric('jobs_not_ended', 'jobs not ended', Object.keys(v.notEnded).length, '', 'lower', false);
  run.metric('jobs_ran_twice', 'jobs run twice', Object.keys(v.ranTwice).length, '', 'lower', false);
  run.note(`5xx by route: ${r.fiveXxText || 'none'}`);
  if (r.transportText) run.note(`no answer: ${r.transportText}`);
  run.note(
    `final states: ${Object.entries(v.states)
      .map(([k, n]) => `${formatNumber(n)} ${k}`)
      .join(', ')}; ${formatNumber(v.cleaned)} cleaned during the run`,
  );
  run.note(
    `p50/p99 by route: ${r.routes
      .filter((x) => x.latencyMs.n > 0)
      .map((x) => `${x.route} ${formatNumber(x.latencyMs.p50)}/${formatNumber(x.latencyMs.p99)} ms`)
      .join('; ')}`,
  );
  run.note(
    `RSS MiB over time (s: MiB): ${r.rss.series.map((x) => `${Math.round(x.s)}: ${Math.round(x.mib)}`).join(', ')}`,
  );
  for (const p of soakProblems(r)) run.note(`MISSED: ${p}`);
}
