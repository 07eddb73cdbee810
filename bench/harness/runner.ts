/**
 * Runs one scenario against one endpoint: optional preparation (untimed), a wait for
 * a quiet machine, the measurement under a time budget, and the server's CPU time
 * over it. A failing scenario becomes a result with status "failed" and a reason; it
 * never ends the run.
 */
import type { ScenarioName } from './args.js';
import { BenchError, shortReason } from './failures.js';
import { cpuSeconds } from './proc.js';
import { SERVER_IDLE_PCT, waitForQuiet } from './quiet.js';
import type { Better, Metric, ScenarioResult } from './results.js';
import type { EndpointSession } from './session.js';

/** Thrown by a scenario that cannot run on this endpoint (no pid known, no curl...). */
export class SkipScenario extends Error {}

export interface Scenario {
  readonly name: ScenarioName;
  readonly title: string;
  /** Untimed set-up before the quiet wait (e.g. creating the jobs a measurement reads). */
  prepare?(run: ScenarioRun): Promise<void>;
  measure(run: ScenarioRun): Promise<void>;
}

/**
 * Set on Ctrl-C: every scenario's deadline becomes "now", so loops stop at their next
 * check and the run goes on to clean up the jobs it created.
 */
export const interruption = { requested: false };

export class ScenarioRun {
  readonly #deadline: number;

  constructor(
    readonly session: EndpointSession,
    readonly result: ScenarioResult,
    budgetS: number,
  ) {
    this.#deadline = Date.now() + budgetS * 1000;
  }

  /** Epoch ms after which the scenario must stop (0 once the run was interrupted). */
  get deadline(): number {
    return interruption.requested ? 0 : this.#deadline;
  }

  get counts() {
    return this.session.counts;
  }

  timeLeftS(): number {
    return (this.deadline - Date.now()) / 1000;
  }

  /** Throws a budget BenchError once the scenario's time is up. */
  checkBudget(what: string): void {
    if (interruption.requested) throw new BenchError('budget', `interrupted ${what}`);
    if (Date.now() > this.deadline)
      throw new BenchError('budget', `time budget of ${this.session.options.budgetS} s spent ${what}`);
  }

  metric(key: string, label: string, value: number, unit: string, better: Better, compare?: boolean): void {
    const m: Metric =
      compare === undefined ? { key, label, value, unit, better } : { key, label, value, unit, better, compare };
    this.result.metrics.push(m);
  }

  param(key: string, value: number | string): void {
    this.result.params[key] = value;
  }

  note(text: string): void {
    this.result.notes.push(text);
  }

  progress(text: string, force = false): void {
    this.session.progress.update(`${this.session.label} / ${this.result.scenario}: ${text}`, force);
  }

  /** Waits for an idle endpoint and a quiet machine (bounded by the options), showing why it waits. */
  async quiet() {
    const o = this.session.options;
    return waitForQuiet({
      maxWaitS: o.quietWaitS,
      // The endpoints' own backlog (this one's, or the other's in a comparison) is worth
      // a longer wait than other people's load.
      serverWaitS: o.quietWaitS === 0 ? 0 : Math.max(o.quietWaitS, 180),
      pids: [...this.session.pids, ...this.session.peerPids],
      onWait: (busy, server, waited) =>
        this.progress(
          `waiting for ${server !== undefined && server >= SERVER_IDLE_PCT ? `the endpoints to be idle (${Math.round(server)} % of a core)` : `a quiet machine (${Math.round(busy)} % of a core busy)`}, ${Math.round(waited)} s`,
        ),
    });
  }
}

export async function runScenario(session: EndpointSession, sc: Scenario): Promise<ScenarioResult> {
  const result: ScenarioResult = {
    scenario: sc.name,
    title: sc.title,
    status: 'ok',
    metrics: [],
    params: {},
    notes: [],
    startedAt: new Date().toISOString(),
    seconds: 0,
  };
  const t0 = Date.now();
  const run = new ScenarioRun(session, result, session.options.budgetS);
  try {
    if (sc.prepare) {
      run.progress('preparing', true);
      await sc.prepare(run);
    }
    result.quiet = await run.quiet();
    const cpu0 = await cpuSeconds(session.pids);
    run.progress('running', true);
    await sc.measure(run);
    const cpu1 = await cpuSeconds(session.pids);
    if (cpu0 !== undefined && cpu1 !== undefined) result.serverCpuS = Math.round((cpu1 - cpu0) * 100) / 100;
  } catch (e) {
    if (e instanceof SkipScenario) {
      result.status = 'skipped';
    } else {
      const budget = e instanceof BenchError && e.kind === 'budget';
      result.status = budget && result.metrics.length > 0 ? 'partial' : 'failed';
      // A harness bug (not a BenchError) keeps its stack for whoever sets BENCH_DEBUG.
      if (!(e instanceof BenchError) && process.env.BENCH_DEBUG)
        process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
    }
    result.reason = shortReason(e);
  }
  result.seconds = Math.round((Date.now() - t0) / 100) / 10;
  session.progress.done();
  session.report.results.push(result);
  return result;
}
