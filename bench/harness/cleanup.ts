/**
 * Removing the harness's jobs from an endpoint: kill what still runs, ask to clean
 * everything, then poll until the jobs are gone (status 404). Services clean a job
 * only once it has ended (Ceres says so in the reason; A-REX queues it), so cleaning
 * is repeated for jobs that reached a final state since. Bounded by a time budget:
 * what is left is reported, never fatal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ArcClient } from './client.js';
import { chunks } from './job-bodies.js';
import { FINAL_STATES } from './answers.js';
import type { JobTracker } from './tracker.js';
import type { Progress } from './progress.js';
import { shortReason } from './failures.js';

const CHUNK = 1000;

/** Asks to kill the jobs; per-item refusals (already ended) are expected and ignored. */
export async function killJobs(client: ArcClient, ids: readonly string[]): Promise<void> {
  for (const c of chunks(ids, CHUNK)) await client.action('kill', c);
}

export interface CleanupReport {
  created: number;
  cleaned: number;
  left: number;
  note?: string;
}

export async function cleanupJobs(
  client: ArcClient,
  tracker: JobTracker,
  progress: Progress,
  budgetS: number,
  label: string,
): Promise<CleanupReport> {
  const start = tracker.pending.length;
  const report = (note?: string): CleanupReport => ({
    created: tracker.created,
    cleaned: start - tracker.pending.length,
    left: tracker.pending.length,
    ...(note !== undefined ? { note } : {}),
  });
  if (start === 0) return report();
  const deadline = Date.now() + budgetS * 1000;
  try {
    progress.update(`${label}: cleanup: killing ${start.toLocaleString('en-US')} jobs`, true);
    await killJobs(client, tracker.pending);
    progress.update(`${label}: cleanup: cleaning ${start.toLocaleString('en-US')} jobs`, true);
    for (const c of chunks(tracker.pending, CHUNK)) await client.action('clean', c);
    for (;;) {
      const round = Date.now();
      const ended: string[] = [];
      for (const c of chunks(tracker.pending, CHUNK)) {
        const { items } = await client.action('status', c);
        const gone: string[] = [];
        items.forEach((it, i) => {
          const id = it.id ?? c[i];
          if (id === undefined) return;
          if (it.status === 404) gone.push(id);
          else if (it.state !== undefined && FINAL_STATES.has(it.state)) ended.push(id);
        });
        tracker.forget(gone);
      }
      const left = tracker.pending.length;
      if (left === 0) return report();
      if (Date.now() > deadline)
        return report(`clean requested for all; ${left.toLocaleString('en-US')} were still listed after ${budgetS} s`);
      progress.update(`${label}: cleanup: ${left.toLocaleString('en-US')} jobs not gone yet`);
      for (const c of chunks(ended, CHUNK)) await client.action('clean', c);
      // Pause at least as long as the round took: polling 100,000 ids must not keep
      // the endpoint busier than the cleaning it waits for.
      await sleep(Math.max(2000, Date.now() - round));
    }
  } catch (e) {
    return report(`cleanup stopped: ${shortReason(e)}`);
  }
}
