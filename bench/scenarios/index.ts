/**
 * The scenarios, in the order a run executes them (args.ts SCENARIO_NAMES):
 *  1. status, info, mixed-load first, while the user owns only the 1,000 (killed) jobs
 *     of the pool, so GET jobs in the mixed load lists the same 1,000 jobs on every
 *     endpoint whatever ran before;
 *  2. then the submissions (their jobs are killed at once, cleaned at the end);
 *  3. latency and drain, which run jobs to the end;
 *  4. transfer, delegation (no jobs);
 *  5. list-jobs and memory last: they fill the store to 100,000 jobs.
 * soak runs only when named (args.ts OPT_IN_SCENARIOS): ten minutes on its own.
 */
import type { ScenarioName } from '../harness/args.js';
import type { Scenario } from '../harness/runner.js';
import { infoScenario, statusScenario } from './bulk-action.js';
import { bulkSubmitScenario } from './bulk-submit.js';
import { concurrentSubmitScenario } from './concurrent-submit.js';
import { delegationScenario } from './delegation.js';
import { drainScenario } from './drain.js';
import { latencyScenario } from './latency.js';
import { mixedLoadScenario } from './mixed-load.js';
import { listJobsScenario, memoryScenario } from './store.js';
import { soakScenario } from './soak.js';
import { transferScenario } from './transfer.js';

export const SCENARIOS: Readonly<Record<ScenarioName, Scenario>> = {
  status: statusScenario,
  info: infoScenario,
  'mixed-load': mixedLoadScenario,
  'bulk-submit': bulkSubmitScenario,
  'concurrent-submit': concurrentSubmitScenario,
  latency: latencyScenario,
  drain: drainScenario,
  transfer: transferScenario,
  delegation: delegationScenario,
  'list-jobs': listJobsScenario,
  memory: memoryScenario,
  soak: soakScenario,
};
