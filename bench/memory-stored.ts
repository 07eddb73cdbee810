/**
 * `npm run build && node dist/bench/memory-stored.js [--stored 1000000] [--out FILE]`
 *
 * A Ceres with a large store: resident memory and the time from start to serving with
 * `--stored` jobs in its database (issue goals: < 150 MiB at 100,000, < 300 MiB and
 * start < 5 s at 1,000,000).
 *
 * Submitting a million jobs through HTTP takes longer than the measurement is worth,
 * so the store is filled directly: 1,000 real jobs are submitted through the REST
 * interface and run to FINISHED, the service is stopped, and their rows (and their
 * accounting records, as a service that ran them would have written) are copied under
 * fresh ids in one SQLite transaction until the table holds `--stored` jobs. The copies
 * are finished jobs with no session directory; the service is then started on that
 * state directory and measured: ready time, RSS after start and 20 s later, and after
 * an `action=status` of 1,000 ids (the index serves it).
 *
 * `--reuse DIR` starts on the service folder of an earlier run (printed as `root`)
 * instead of filling a new one: start-up compared between builds on the same store.
 */
import { parseArgs } from 'node:util';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { CeresService } from './soak/service.js';
import { devPkiUsers, mixUsers, type UserFiles } from './soak/users.js';
import { bulkBody } from './harness/job-bodies.js';
import { freePort, point, report, type Point } from './memory-points.js';
import { newJobId } from '../src/jobs/job-id.js';

const TEMPLATE_JOBS = 1000;

/** Copies the finished jobs' rows under fresh ids until `jobs` holds `total` rows. */
function fill(dbFile: string, total: number): { ids: string[]; s: number } {
  const t0 = performance.now();
  const db = new Database(dbFile);
  try {
    const cols = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
    const acols = (db.prepare('PRAGMA table_info(accounting_records)').all() as { name: string }[]).map((c) => c.name);
    const templates = db.prepare('SELECT id FROM jobs').pluck().all() as string[];
    const copyJob = db.prepare(
      `INSERT INTO jobs (${cols.join(', ')}) SELECT ${cols.map((c) => (c === 'id' ? '?' : c)).join(', ')} FROM jobs WHERE id = ?`,
    );
    const copyRecord = db.prepare(
      `INSERT INTO accounting_records (${acols.join(', ')}) SELECT ${acols.map((c) => (c === 'job_id' ? '?' : c)).join(', ')} FROM accounting_records WHERE job_id = ?`,
    );
    const ids: string[] = [...templates];
    db.transaction(() => {
      for (let n = templates.length; n < total; n++) {
        const from = templates[n % templates.length]!;
        const id = newJobId();
        copyJob.run(id, from);
        copyRecord.run(id, from);
        if (ids.length < 100_000) ids.push(id);
      }
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { ids, s: Math.round((performance.now() - t0) / 100) / 10 };
  } finally {
    db.close();
  }
}

/** The ids of the last `n` jobs stored (read-only; SQLite allows it beside the service). */
function lastIds(dbFile: string, n: number): string[] {
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.prepare('SELECT id FROM jobs ORDER BY rowid DESC LIMIT ?').pluck().all(n) as string[];
  } finally {
    db.close();
  }
}

/** Submits the template jobs through REST, runs them to FINISHED, stops the service and fills its store. */
async function fillThrough(
  service: CeresService,
  files: UserFiles,
  root: string,
  stored: number,
): Promise<{ ids: string[]; s: number; restartAt: number }> {
  const [user] = await mixUsers(service.url, [files], 4, '1.1');
  const client = user!.client;
  const r = await client.submit(bulkBody('xrsl', 'trivial', TEMPLATE_JOBS, 'tpl'), 'application/rsl');
  if (r.items.filter((x) => x.status === 201).length !== TEMPLATE_JOBS) throw new Error('template jobs not created');
  for (let i = 0; ; i++) {
    const { jobs } = await client.list();
    if (jobs.length === TEMPLATE_JOBS && jobs.every((j) => j.state === 'FINISHED')) break;
    if (i > 600) throw new Error('template jobs did not finish within 5 minutes');
    await sleep(500);
  }
  await client.close();
  await service.stop();
  const filled = fill(join(root, 'state', 'ceres.db'), stored);
  return { ...filled, restartAt: performance.now() };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { stored: { type: 'string' }, out: { type: 'string' }, reuse: { type: 'string' } },
  });
  const stored = Number(values.stored ?? 1_000_000);
  const metricsPort = await freePort();
  const config = {
    metrics: { listen: `127.0.0.1:${metricsPort}` },
    jobs: { maxActiveJobsPerUser: 0 },
    engine: { maxRunningJobsPerUser: 0 },
  };
  const root = values.reuse ?? join(await mkdtemp(join(tmpdir(), 'ceres-memory-stored-')), 'service');
  const t0 = performance.now();
  const service = await CeresService.start(root, config);
  const [files] = await devPkiUsers(service.pkiDir);
  const filled = values.reuse === undefined ? await fillThrough(service, files!, root, stored) : undefined;
  const points: Point[] = [];
  if (filled !== undefined) await service.restart(300);
  const readyS = Math.round((performance.now() - (filled?.restartAt ?? t0)) / 100) / 10;
  try {
    const pid = service.pid as number;
    points.push(await point(pid, `${stored} jobs stored, ready`, t0, metricsPort));
    await sleep(20_000);
    points.push(await point(pid, `${stored} jobs stored, 20 s after start`, t0, metricsPort));
    const [again] = await mixUsers(service.url, [files!], 4, '1.1');
    const client = again!.client;
    const ids = filled?.ids ?? lastIds(join(root, 'state', 'ceres.db'), 1000);
    const st = await client.action('status', ids.slice(-1000));
    if (st.items.length !== 1000) throw new Error('status of 1,000 ids: wrong answer');
    points.push(await point(pid, 'after action=status of 1,000 ids', t0, metricsPort));
    await client.close();
  } finally {
    await service.stop();
  }
  await report(
    'ceres-bench-memory-stored',
    {
      options: { stored },
      root,
      fill: filled && {
        how: 'rows of 1,000 finished jobs copied under fresh ids (SQLite, one transaction)',
        s: filled.s,
      },
      readyS,
      points,
    },
    values.out,
  );
}

await main();
