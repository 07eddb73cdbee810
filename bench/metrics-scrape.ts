/**
 * `npm run build && node dist/bench/metrics-scrape.js [--stored 100000] [--rounds 30]`
 *
 * The event-loop time of one scrape of the job gauges (`ceres_jobs`, `ceres_route_jobs`) with
 * `--stored` jobs in the store, in process: the counts the store keeps as it writes
 * (src/store/state-tally.ts) against the GROUP BY over every stored job that each scrape ran
 * before, side by side in the same run on the same database (two registries, scraped in turn,
 * medians). The store is filled through JobStore.insertMany (so the tally is the one the
 * service keeps): 90 % FINISHED, the rest spread over the active states, five queues, a
 * quarter of them routed. Also printed: the first scrape, which loads the counts (one
 * GROUP BY, once per start), and the figures of both, which must be equal.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/store/database.js';
import { JobStore, type NewJob } from '../src/store/job-store.js';
import { CeresMetrics } from '../src/metrics/registry.js';
import { registerJobGauges, type StateCounts } from '../src/metrics/jobs.js';
import { newJobId } from '../src/jobs/job-id.js';
import { newJobRow } from '../test/helpers/new-job.js';

const { values } = parseArgs({
  options: { stored: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '30' } },
});
const stored = Number(values.stored);
const rounds = Number(values.rounds);

const ACTIVE: readonly [NewJob['state'], NewJob['restState']][] = [
  ['ACCEPTED', 'ACCEPTING'],
  ['PREPARING', 'PREPARING'],
  ['INLRMS', 'RUNNING'],
  ['FINISHING', 'FINISHING'],
];

function job(i: number): NewJob {
  const [state, restState] = i % 10 === 0 ? ACTIVE[(i / 10) % ACTIVE.length]! : (['FINISHED', 'FINISHED'] as const);
  return newJobRow(newJobId(), `owner${i % 50}`, {
    state,
    restState,
    queue: `queue${i % 5}`,
    ...(i % 4 === 0 ? { route: { name: `route${i % 3}` } } : {}),
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number): number => Math.round(x * 1000) / 1000;

const dir = mkdtempSync(join(tmpdir(), 'ceres-bench-scrape-'));
try {
  const db = openDatabase(join(dir, 'db'));
  const store = new JobStore(db);
  for (let i = 0; i < stored; i += 1000)
    store.insertMany(Array.from({ length: Math.min(1000, stored - i) }, (_, k) => job(i + k)));
  // Before: every scrape grouped the table (what the gauges read until this change).
  const grouped: StateCounts = {
    tally: () => ({ byState: () => store.countByState(), byRoute: () => store.countByRoute() }),
  };
  const before = new CeresMetrics();
  registerJobGauges(before, grouped);
  const after = new CeresMetrics();
  registerJobGauges(after, store);
  const timed = async (m: CeresMetrics): Promise<[number, string]> => {
    const t0 = performance.now();
    const text = await m.registry.metrics();
    return [performance.now() - t0, text];
  };
  const [firstMs] = await timed(after);
  const b: number[] = [];
  const a: number[] = [];
  let same = true;
  for (let r = 0; r < rounds; r++) {
    const [tb, xb] = await timed(before);
    const [ta, xa] = await timed(after);
    b.push(tb);
    a.push(ta);
    const lines = (x: string): string =>
      x
        .split('\n')
        .filter((l) => /^ceres_(route_)?jobs\{/.test(l))
        .sort()
        .join('\n');
    same &&= lines(xb) === lines(xa);
  }
  db.close();
  console.log(
    JSON.stringify(
      {
        stored,
        rounds,
        groupByScrapeMedianMs: ms(median(b)),
        tallyScrapeMedianMs: ms(median(a)),
        ratio: Math.round(median(b) / median(a)),
        firstTallyScrapeMs: ms(firstMs),
        sameFigures: same,
      },
      null,
      2,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
