/**
 * `npm run build && node dist/bench/memory.js [--jobs 10000] [--kind trivial|parked]
 *   [--max-running N] [--burst 20] [--idle 60] [--out FILE]`
 *
 * Where a harness-started Ceres's resident memory goes in the shapes of the performance
 * issue: right after start (and how long the start took), with `--jobs` jobs stored
 * (bulk POSTs of 1,000; `trivial` jobs run /bin/true and end, `parked` ones wait in
 * PREPARING for an upload; with `--max-running 1` trivial jobs wait as PENDING), then
 * after `--burst` more bulk POSTs of 1,000 and `--idle` seconds of idling. Each point
 * records VmRSS and /proc/<pid>/smaps_rollup (anonymous vs file-backed), the size of the
 * malloc heap ([heap] in smaps) and the V8 heap figures the service reports nowhere else
 * are left to `--trace-gc` (CERES_NODE_FLAGS, read by bin/ceres). The launcher is the
 * one operations use (bin/ceres); CERES_MALLOC=system measures the C library's malloc.
 * Prints one JSON document.
 */
import { parseArgs } from 'node:util';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CeresService } from './soak/service.js';
import { devPkiUsers, mixUsers } from './soak/users.js';
import { bulkBody, type JobKind } from './harness/job-bodies.js';

interface Point {
  readonly label: string;
  readonly s: number;
  readonly rssMiB: number;
  readonly anonMiB: number;
  readonly fileMiB: number;
  readonly mallocHeapMiB: number;
}

const mib = (kib: number): number => Math.round(kib / 102.4) / 10;

async function point(pid: number, label: string, t0: number): Promise<Point> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  // The brk heap: glibc's main arena (jemalloc maps its own regions and leaves it small).
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8');
  const heap = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/.exec(smaps);
  return {
    label,
    s: Math.round((performance.now() - t0) / 100) / 10,
    rssMiB: mib(field('Rss')),
    anonMiB: mib(field('Anonymous')),
    fileMiB: mib(field('Rss') - field('Anonymous')),
    mallocHeapMiB: heap ? mib(Number(heap[1])) : 0,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      jobs: { type: 'string' },
      kind: { type: 'string' },
      'max-running': { type: 'string' },
      burst: { type: 'string' },
      idle: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const jobs = Number(values.jobs ?? 10_000);
  const kind = (values.kind ?? 'trivial') as JobKind;
  const burst = Number(values.burst ?? 20);
  const idleS = Number(values.idle ?? 60);
  const maxRunning = values['max-running'] === undefined ? undefined : Number(values['max-running']);
  const root = await mkdtemp(join(tmpdir(), 'ceres-memory-'));
  const config: Record<string, unknown> = {
    jobs: { maxActiveJobsPerUser: 0 },
    engine: { maxRunningJobsPerUser: 0, ...(maxRunning === undefined ? {} : { maxRunningJobs: maxRunning }) },
  };
  const t0 = performance.now();
  const service = await CeresService.start(join(root, 'service'), config);
  const readyS = Math.round((performance.now() - t0) / 100) / 10;
  const pid = service.pid as number;
  const points: Point[] = [];
  try {
    await sleep(2000);
    points.push(await point(pid, 'fresh start', t0));
    const [files] = await devPkiUsers(service.pkiDir);
    const [user] = await mixUsers(service.url, [files!], 4, '1.1');
    const client = user!.client;
    let posted = 0;
    const post = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i += 1000) {
        const k = Math.min(1000, n - i);
        const r = await client.submit(bulkBody('xrsl', kind, k, `m${posted}`), 'application/rsl');
        const ok = r.items.filter((x) => x.status === 201).length;
        if (ok !== k) throw new Error(`bulk POST ${posted}: ${ok} of ${k} created`);
        posted += k;
        if (posted % 10_000 === 0) points.push(await point(pid, `${posted} jobs posted`, t0));
      }
    };
    await post(jobs);
    await sleep(20_000);
    points.push(await point(pid, `${jobs} jobs stored, 20 s after`, t0));
    if (burst > 0) {
      await post(burst * 1000);
      points.push(await point(pid, `right after a burst of ${burst} bulk POSTs of 1,000`, t0));
      await sleep(idleS * 1000);
      points.push(await point(pid, `after the burst and ${idleS} s idle`, t0));
    }
    await client.close();
  } finally {
    await service.stop();
  }
  const doc = {
    tool: 'ceres-bench-memory',
    date: new Date().toISOString(),
    malloc: process.env.CERES_MALLOC === 'system' ? 'system' : 'jemalloc where installed',
    nodeFlags: process.env.CERES_NODE_FLAGS ?? '',
    options: { jobs, kind, maxRunning, burst, idleS },
    readyS,
    points,
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (values.out) await writeFile(values.out, text);
  process.stdout.write(text);
}

await main();
