/**
 * Jobs the measurements need but do not time: the pool that status, info and the
 * mixed load read, and the big store that list-jobs and memory measure. Both are
 * shared per endpoint session and made once.
 *
 * Both must stay still while they are measured, and what "still" costs differs:
 *  - killed jobs (trivial jobs killed right after submission) end at once and then
 *    cost nothing; a service that polls waiting jobs (Ceres checks every job waiting
 *    for an upload every few seconds) is not loaded by them. A-REX needs about a
 *    minute per 1,000 kills on this machine, fine for the pool, hours for 100,000;
 *  - parked jobs (waiting in PREPARING for an upload that never comes) cost A-REX
 *    nothing once accepted, so its store is made of them.
 * The pool is always killed jobs; the store's kind is a count option (storeKind).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ArcClient } from '../harness/client.js';
import { createdIds, FINAL_STATES, tallyText } from '../harness/answers.js';
import { bulkBody, chunks, type JobKind } from '../harness/job-bodies.js';
import { BenchError } from '../harness/failures.js';
import type { ScenarioRun } from '../harness/runner.js';
import { formatNumber } from '../harness/render.js';
import { killJobs } from '../harness/cleanup.js';
import type { StoreKind } from '../harness/args.js';
import { rssMiB } from '../harness/proc.js';

export const BULK_CHUNK = 1000;

/** How long the pool may take to reach final states (A-REX reports them a minute late). */
const POOL_SETTLE_S = 240;

export function contentTypeOf(format: 'xrsl' | 'adl'): string {
  return format === 'adl' ? 'application/xml' : 'application/rsl';
}

/**
 * One bulk POST of `count` jobs; created ids are tracked for cleanup. Throws when no
 * job at all was created (the per-item reasons say why).
 */
export async function submitBulk(
  run: ScenarioRun,
  client: ArcClient,
  kind: JobKind,
  count: number,
  prefix: string,
): Promise<{ ids: string[]; ms: number; failed: number }> {
  const s = run.session;
  const { items, ms } = await client.submit(
    bulkBody(s.options.format, kind, count, prefix),
    contentTypeOf(s.options.format),
  );
  const { ids, failures } = createdIds(items);
  s.tracker.add(ids);
  if (s.shared.storeCount !== undefined) s.shared.storeCount += ids.length;
  if (ids.length === 0)
    throw new BenchError(
      'http',
      `no job was created by a bulk submission of ${count}: ${tallyText(failures) || 'empty answer'}`,
    );
  if (items.length !== count) run.note(`a bulk submission of ${count} answered ${items.length} items`);
  return { ids, ms, failed: count - ids.length };
}

/** Jobs of a store or pool: parked, or trivial and killed at once. */
async function submitStill(run: ScenarioRun, kind: StoreKind, count: number, prefix: string): Promise<string[]> {
  const c = run.session.client;
  const { ids } = await submitBulk(run, c, kind === 'parked' ? 'parked' : 'trivial', count, prefix);
  if (kind === 'killed') await killJobs(c, ids);
  return ids;
}

/** Polls status until every id is in a final state, or the time is up; returns those not final. */
async function settle(run: ScenarioRun, ids: readonly string[], maxS: number): Promise<number> {
  const c = run.session.client;
  const t0 = performance.now();
  let pending = [...ids];
  while (pending.length > 0 && (performance.now() - t0) / 1000 < maxS) {
    const next: string[] = [];
    for (const ch of chunks(pending, BULK_CHUNK)) {
      const { items } = await c.action('status', ch);
      items.forEach((it, i) => {
        if (it.state === undefined || !FINAL_STATES.has(it.state)) next.push(it.id ?? (ch[i] as string));
      });
    }
    pending = next;
    if (pending.length === 0) break;
    run.progress(
      `waiting for ${formatNumber(pending.length)} killed jobs to end (${formatNumber((performance.now() - t0) / 1000)} s)`,
    );
    await sleep(2000);
  }
  return pending.length;
}

/** At least `n` killed jobs that have ended, created in bulk POSTs when missing. */
export async function ensurePool(run: ScenarioRun, n: number): Promise<string[]> {
  const s = run.session;
  const pool = (s.shared.pool ??= []);
  if (pool.length >= n) return pool.slice(0, n);
  const made: string[] = [];
  while (pool.length < n) {
    run.checkBudget(`creating ${n} jobs`);
    const want = Math.min(BULK_CHUNK, n - pool.length);
    run.progress(`creating jobs ${formatNumber(pool.length)}/${formatNumber(n)}`);
    const ids = await submitStill(run, 'killed', want, `bench-pool-${pool.length}`);
    pool.push(...ids);
    made.push(...ids);
  }
  const left = await settle(run, made, Math.min(POOL_SETTLE_S, Math.max(10, run.timeLeftS() / 2)));
  if (left > 0) run.note(`${left} of the ${made.length} killed jobs read had not reached a final state`);
  return pool.slice(0, n);
}

/**
 * Fills the store up to `target` jobs listed for the user (1,000 per POST), within
 * `budgetS`. Returns the count reached; when the budget runs out first the store
 * stays smaller and the shortfall is recorded for the notes.
 */
export async function ensureStore(run: ScenarioRun, target: number, budgetS: number): Promise<number> {
  const s = run.session;
  const kind = run.counts.storeKind;
  if (s.shared.storeCount === undefined) {
    run.progress('counting the jobs already stored', true);
    s.shared.storeCount = (await s.client.list()).jobs.length;
  }
  const start = s.shared.storeCount;
  if (s.shared.rssBeforeStore === undefined) {
    const mib = await rssMiB(s.pids);
    if (mib !== undefined) s.shared.rssBeforeStore = { mib, jobs: start };
  }
  if (start >= target) return start;
  const t0 = Date.now();
  const deadline = t0 + budgetS * 1000;
  let made = 0;
  const count = (): number => s.shared.storeCount ?? 0;
  while (count() < target) {
    const el = (Date.now() - t0) / 1000;
    if (Date.now() > deadline) {
      s.shared.storeNote = `store filled to ${formatNumber(count())} of ${formatNumber(target)} jobs (${kind}): the fill budget of ${budgetS} s ran out at ${formatNumber(made / el)} jobs/s`;
      return count();
    }
    const want = Math.min(BULK_CHUNK, target - count());
    const ids = await submitStill(run, kind, want, `bench-store-${made}`);
    made += ids.length;
    const rate = made / Math.max((Date.now() - t0) / 1000, 0.001);
    run.progress(
      `filling the store: ${formatNumber(count())}/${formatNumber(target)} ${kind} jobs, ${formatNumber(rate)} jobs/s, ~${formatNumber((target - count()) / Math.max(rate, 0.001))} s to go`,
    );
  }
  const el = (Date.now() - t0) / 1000;
  s.shared.storeNote = `store filled from ${formatNumber(start)} to ${formatNumber(count())} jobs in ${formatNumber(el)} s (${formatNumber(made / Math.max(el, 0.001))} jobs/s; ${kind} jobs)`;
  return count();
}
