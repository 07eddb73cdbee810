/**
 * `npm run build && node dist/bench/web-admin-index.js [--jobs 100000] [--runs 5]`
 *
 * What the index (created_at, id) of migration 9 costs and buys: the CPU time of inserting
 * `--jobs` job rows (in transactions of 100, as submissions are grouped) with and without
 * the index, alternating runs, and the time of the web interface's administrator page
 * (every owner's jobs, newest first, 50 rows; first page, a deep page, a state filter) on
 * the resulting table with and without it. Process CPU time, medians. Prints one JSON document.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/store/database.js';
import { JobPages } from '../src/store/job-pages.js';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '100000' }, runs: { type: 'string', default: '5' } },
});
const jobs = Number(values.jobs);
const runs = Number(values.runs);
const desc = JSON.stringify({ executable: '/bin/sh', arguments: ['-c', 'x'.repeat(200)] });

function cpuMs<T>(fn: () => T): [number, T] {
  const c0 = process.cpuUsage();
  const r = fn();
  const c = process.cpuUsage(c0);
  return [(c.user + c.system) / 1000, r];
}

function run(withIndex: boolean): { insertMs: number; pageMs: { first: number; deep: number; filtered: number } } {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-bench-adminidx-'));
  try {
    const db = openDatabase(join(dir, 'ceres.db'));
    if (!withIndex) db.exec('DROP INDEX jobs_created');
    const ins = db.prepare(
      `INSERT INTO jobs (id, owner, state, rest_state, queue, format, description, raw, created_at, updated_at) VALUES (?, ?, 'FINISHED', ?, 'main', 'xrsl', ?, ?, ?, 0)`,
    );
    const t0 = 1_700_000_000_000;
    const batch = db.transaction((base: number) => {
      for (let i = base; i < Math.min(base + 100, jobs); i++)
        ins.run(
          `j${String(i).padStart(9, '0')}`,
          `/O=Grid/CN=user${i % 50}`,
          i % 10 ? 'FINISHED' : 'FAILED',
          desc,
          desc,
          t0 + i,
        );
    });
    const [insertMs] = cpuMs(() => {
      for (let b = 0; b < jobs; b += 100) batch(b);
    });
    // Without the index the page's INDEXED BY would fail: the same query without the hint.
    const pages = withIndex ? new JobPages(db) : undefined;
    const plain = db.prepare(
      `SELECT id, rest_state AS state, queue, created_at AS createdAt, exit_code AS exitCode, owner FROM jobs WHERE (@state IS NULL OR rest_state = @state) AND (@t IS NULL OR created_at < @t OR (created_at = @t AND id < @id)) ORDER BY created_at DESC, id DESC LIMIT 51`,
    );
    const page = (state: string | undefined, after: { createdAt: number; id: string } | undefined) =>
      pages
        ? pages.pageAll(state, after, 51)
        : plain.all({ state: state ?? null, t: after?.createdAt ?? null, id: after?.id ?? null });
    const time = (state: string | undefined, after?: { createdAt: number; id: string }) => {
      const [ms] = cpuMs(() => {
        for (let i = 0; i < 10; i++) page(state, after);
      });
      return ms / 10;
    };
    const mid = Math.floor(jobs / 2);
    const result = {
      insertMs,
      pageMs: {
        first: time(undefined),
        deep: time(undefined, { createdAt: t0 + mid, id: `j${String(mid).padStart(9, '0')}` }),
        filtered: time('FAILED'),
      },
    };
    db.close();
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const withI: ReturnType<typeof run>[] = [];
const without: ReturnType<typeof run>[] = [];
for (let r = 0; r < runs; r++) {
  without.push(run(false));
  withI.push(run(true));
}
const summary = (rs: ReturnType<typeof run>[]) => ({
  insertCpuMs: median(rs.map((r) => r.insertMs)),
  pageCpuMs: {
    first: median(rs.map((r) => r.pageMs.first)),
    deep: median(rs.map((r) => r.pageMs.deep)),
    filtered: median(rs.map((r) => r.pageMs.filtered)),
  },
});
const a = summary(without);
const b = summary(withI);
console.log(
  JSON.stringify(
    { jobs, runs, withoutIndex: a, withIndex: b, insertRatio: Number((b.insertCpuMs / a.insertCpuMs).toFixed(3)) },
    null,
    2,
  ),
);
