/**
 * What `bench` and `bench:compare` share: running the chosen scenarios over one or
 * more endpoint sessions (scenario by scenario, every endpoint in turn, so both see
 * the machine in the same state), cleaning up, and writing the report files.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ScenarioName } from './harness/args.js';
import { interruption, runScenario } from './harness/runner.js';
import type { EndpointSession } from './harness/session.js';
import { cleanupJobs } from './harness/cleanup.js';
import { formatNumber, scenarioLine } from './harness/render.js';
import { SCENARIOS } from './scenarios/index.js';
import type { Progress } from './harness/progress.js';

/** `afterEach` runs after every scenario (the callers save the results so far). */
export async function runAll(
  sessions: readonly EndpointSession[],
  names: readonly ScenarioName[],
  progress: Progress,
  afterEach?: () => Promise<void>,
): Promise<void> {
  for (const s of sessions) s.peerPids = sessions.filter((o) => o !== s).flatMap((o) => o.pids);
  for (const name of names) {
    for (const s of sessions) {
      if (interruption.requested) return;
      const r = await runScenario(s, SCENARIOS[name]);
      progress.log(scenarioLine(s.label, r));
      await afterEach?.();
    }
  }
}

export async function cleanupAll(sessions: readonly EndpointSession[], progress: Progress): Promise<void> {
  for (const s of sessions) {
    if (!s.options.cleanup) {
      if (s.tracker.pending.length > 0)
        progress.log(`${s.label}: left ${formatNumber(s.tracker.pending.length)} jobs on the endpoint (--no-cleanup)`);
      continue;
    }
    // Waiting is bounded: services that queue the clean (A-REX) finish it on their own.
    const budget = Math.min(600, Math.max(120, Math.ceil(s.tracker.pending.length / 50)));
    s.report.cleanup = await cleanupJobs(s.client, s.tracker, progress, budget, s.label);
    progress.done();
    const c = s.report.cleanup;
    progress.log(
      `${s.label}: cleanup: ${formatNumber(c.cleaned)} of ${formatNumber(c.cleaned + c.left)} jobs removed${c.note ? ` (${c.note})` : ''}`,
    );
  }
}

export async function writeText(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

/**
 * First Ctrl-C (or SIGTERM): stop measuring, clean up, save what was measured; a
 * second one ends the process (the default action, once our handler is gone).
 */
export function onInterrupt(progress: Progress): void {
  const handler = (signal: NodeJS.Signals): void => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
    interruption.requested = true;
    progress.log(
      `\n${signal}: stopping the scenario, cleaning up and saving the results so far (again to leave the jobs)`,
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
