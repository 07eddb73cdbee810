/**
 * The `ceres_jobs` and `ceres_route_jobs` gauges read counts the store keeps as it writes
 * (src/store/state-tally.ts): a scrape runs no SQL statement once the counts are loaded (a
 * GROUP BY over every stored job took about 100 ms at 100,000 stored jobs), and the figures
 * stay those of the table's GROUP BY through inserts, state changes, held flags, lost
 * compare-and-sets and deletions.
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { CeresMetrics } from '../../src/metrics/registry.js';
import { registerJobGauges } from '../../src/metrics/jobs.js';
import { newJobRow } from '../helpers/new-job.js';

/** A database whose statements count their runs (every run, get, all and iterate). */
function countingDb(db: Db): { db: Db; runs: () => number } {
  let runs = 0;
  const wrap = (stmt: object): object => {
    const p: object = new Proxy(stmt, {
      get(t, k) {
        const v = Reflect.get(t, k, t) as unknown;
        if (typeof v !== 'function') return v;
        return (...a: unknown[]) => {
          if (k === 'run' || k === 'get' || k === 'all' || k === 'iterate') runs++;
          const r = (v as (...x: unknown[]) => unknown).apply(t, a);
          return r === t ? p : r;
        };
      },
    });
    return p;
  };
  const counted = new Proxy(db, {
    get(t, k) {
      const v = Reflect.get(t, k, t) as unknown;
      if (k === 'prepare') return (sql: string) => wrap(t.prepare(sql));
      return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(t) : v;
    },
  });
  return { db: counted, runs: () => runs };
}

function openStore(t: TestContext): { store: JobStore; db: Db; runs: () => number } {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-tally-'));
  const real = openDatabase(join(dir, 'db'));
  t.after(() => {
    real.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { db, runs } = countingDb(real);
  return { store: new JobStore(db), db: real, runs };
}

const scrape = async (m: CeresMetrics): Promise<string> => {
  const text = await m.registry.metrics();
  return text
    .split('\n')
    .filter((l) => /^ceres_(route_)?jobs\{/.test(l))
    .sort()
    .join('\n');
};

test('a scrape of the job gauges runs no SQL statement once the counts are loaded', async (t) => {
  const { store, runs } = openStore(t);
  store.insertMany(Array.from({ length: 50 }, (_, i) => newJobRow(`j${i}`, 'o', { queue: i % 2 ? 'a' : 'b' })));
  const m = new CeresMetrics();
  registerJobGauges(m, store);
  const first = await scrape(m);
  assert.match(first, /^ceres_jobs\{state="ACCEPTED",queue="a"\} 25$/m);
  const before = runs();
  for (let i = 0; i < 20; i++) assert.equal(await scrape(m), first);
  assert.equal(runs() - before, 0, 'statements run by 20 scrapes');
});

test('the gauges keep the figures of the GROUP BY through inserts, transitions, held jobs, lost CAS and deletions', async (t) => {
  const { store, db } = openStore(t);
  const m = new CeresMetrics();
  registerJobGauges(m, store);
  /** The gauges' lines as the table's GROUP BY gives them. */
  const truth = (): string => {
    const lines: string[] = [];
    const per = new Map<string, number>();
    for (const r of store.countByState()) {
      const k = `ceres_jobs{state="${r.pending ? `PENDING:${r.state}` : r.state}",queue="${r.queue}"}`;
      per.set(k, (per.get(k) ?? 0) + r.n);
    }
    for (const [k, n] of per) lines.push(`${k} ${n}`);
    for (const r of store.countByRoute()) lines.push(`ceres_route_jobs{route="${r.route}",state="${r.state}"} ${r.n}`);
    return lines.sort().join('\n');
  };
  const route = (name: string) => ({ name });
  store.insertMany([newJobRow('a', 'o', { queue: 'q1' }), newJobRow('b', 'o', { queue: 'q2', route: route('r1') })]);
  assert.equal(await scrape(m), truth(), 'loaded from the table');
  store.insertMany([
    newJobRow('c', 'o', { queue: 'q1', route: route('r1') }),
    newJobRow('d', 'p', { queue: 'q1', route: route('r2') }),
  ]);
  assert.equal(await scrape(m), truth(), 'after an insert');
  const step = async (id: string, changes: Parameters<JobStore['update']>[1], what: string) => {
    const j = store.get(id)!;
    assert.ok(store.update(j, changes), what);
    assert.equal(await scrape(m), truth(), what);
    return j;
  };
  await step('a', { state: 'PREPARING', restState: 'PREPARING' }, 'a transition');
  await step('b', { pending: true }, 'held');
  await step('b', { pending: false, state: 'SUBMIT', restState: 'SUBMITTING' }, 'released and moved');
  await step('c', { engine: { x: 1 } }, 'a change of no counted key');
  const stale = await step('d', { state: 'FINISHED', restState: 'FINISHED' }, 'ended');
  assert.equal(store.update(stale, { state: 'FAILED', restState: 'FAILED' }), undefined, 'a lost compare-and-set');
  assert.equal(await scrape(m), truth(), 'after a lost compare-and-set');
  assert.equal(store.delete(stale), false, 'a delete of an old version');
  assert.ok(store.delete(store.get('d')!));
  assert.equal(await scrape(m), truth(), 'after a deletion');
  assert.ok(store.delete(store.get('a')!));
  assert.doesNotMatch(await scrape(m), /PREPARING/, 'a count at 0 is not published');
  assert.equal(await scrape(m), truth());
  // Sanity: the truth is the table's.
  assert.equal((db.prepare('SELECT count(*) FROM jobs').pluck().get() as number) > 0, true);
});
