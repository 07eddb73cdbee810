/**
 * `npm run build && node dist/bench/memory.js [--jobs 10000] [--kind trivial|parked|running]
 *   [--max-running N] [--burst 20] [--idle 60] [--settle] [--kill] [--out FILE]`
 *
 * Where a harness-started Ceres's resident memory goes in the shapes of the performance
 * issue: right after start (and how long the start took), with `--jobs` jobs stored
 * (bulk POSTs of 1,000; `trivial` jobs run /bin/true and end, `parked` ones wait in
 * PREPARING for an upload, `running` ones run /bin/sleep in the fork backend and are
 * killed at the end; with `--max-running 1` trivial jobs wait as PENDING), then
 * after `--burst` more bulk POSTs of 1,000 and `--idle` seconds of idling. Each point
 * records VmRSS and /proc/<pid>/smaps_rollup (anonymous vs file-backed), the size of the
 * malloc heap ([heap] in smaps) and the V8 heap figures the service reports nowhere else
 * are left to `--trace-gc` (CERES_NODE_FLAGS, read by bin/ceres). The launcher is the
 * one operations use (bin/ceres); CERES_MALLOC=system measures the C library's malloc.
 * `--settle`: before the "stored" point, wait until the engine has taken every job as far
 * as it goes (no job left ACCEPTED or SUBMIT, per the service's `ceres_jobs` gauge), so the
 * figure is the cost of jobs parked or running, not of a backlog still being worked through.
 * `--kill`: each bulk POST's jobs are killed right after it (one `action=kill` of 1,000
 * ids), as the benchmark's store fill does; the "stored" point then waits until every job
 * has ended, so the points in between show what the engine holds while it works.
 * Prints one JSON document.
 */
import { parseArgs } from 'node:util';
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { freePort, point, report, type Point } from './memory-points.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CeresService } from './soak/service.js';
import { devPkiUsers, mixUsers } from './soak/users.js';
import { bulkBody, type JobKind } from './harness/job-bodies.js';
import { killJobs } from './harness/cleanup.js';

/**
 * `--snapshot DIR`: a V8 heap snapshot of the service at the stored point (with `--kill`:
 * right after the last POST, while the engine works through the kills), written into
 * DIR (needs CERES_NODE_FLAGS="--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=DIR").
 * Waits until the file is complete (its size stops changing).
 */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  const before = new Set(await readdir(dir));
  process.kill(pid, 'SIGUSR2');
  let last = -1;
  for (let i = 0; i < 600; i++) {
    await sleep(1000);
    const fresh = (await readdir(dir)).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (fresh.length === 0) continue;
    const size = (await stat(join(dir, fresh[0]!))).size;
    if (size === last && size > 0) return;
    last = size;
  }
  throw new Error('no heap snapshot within 10 minutes');
}

/** Jobs per state, from the service's `ceres_jobs` gauge (all queues summed). */
async function jobStates(metricsPort: number): Promise<Map<string, number>> {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^ceres_jobs\{[^}]*state="([^"]+)"[^}]*\} (\S+)$/gm))
    out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  return out;
}

/** Waits (up to `limitS`) until no job is in any of `states`; the seconds it took. */
async function waitUntilNone(metricsPort: number, states: readonly string[], limitS: number): Promise<number> {
  const t = performance.now();
  while (performance.now() - t < limitS * 1000) {
    const n = await jobStates(metricsPort);
    if (states.every((st) => (n.get(st) ?? 0) === 0)) break;
    await sleep(2000);
  }
  return Math.round((performance.now() - t) / 100) / 10;
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
      snapshot: { type: 'string' },
      settle: { type: 'boolean' },
      kill: { type: 'boolean' },
    },
  });
  const jobs = Number(values.jobs ?? 10_000);
  const kind = (values.kind ?? 'trivial') as JobKind;
  const burst = Number(values.burst ?? 20);
  const idleS = Number(values.idle ?? 60);
  const maxRunning = values['max-running'] === undefined ? undefined : Number(values['max-running']);
  const root = await mkdtemp(join(tmpdir(), 'ceres-memory-'));
  const metricsPort = await freePort();
  const config: Record<string, unknown> = {
    metrics: { listen: `127.0.0.1:${metricsPort}` },
    jobs: { maxActiveJobsPerUser: 0 },
    engine: { maxRunningJobsPerUser: 0, ...(maxRunning === undefined ? {} : { maxRunningJobs: maxRunning }) },
  };
  const t0 = performance.now();
  const service = await CeresService.start(join(root, 'service'), config);
  const readyS = Math.round((performance.now() - t0) / 100) / 10;
  const pid = service.pid as number;
  const points: Point[] = [];
  // V8's heap in use, sampled every 2 s over the whole run: its peak (garbage included).
  let peakHeapUsedMiB = 0;
  const sampler = setInterval(() => {
    void fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      .then((r) => r.text())
      .then((t) => {
        const used = Number(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(t)?.[1] ?? 0) / 2 ** 20;
        peakHeapUsedMiB = Math.max(peakHeapUsedMiB, Math.round(used * 10) / 10);
      })
      .catch(() => undefined);
  }, 2000);
  try {
    await sleep(2000);
    points.push(await point(pid, 'fresh start', t0, metricsPort));
    const [files] = await devPkiUsers(service.pkiDir);
    const [user] = await mixUsers(service.url, [files!], 4, '1.1');
    const client = user!.client;
    let posted = 0;
    const ids: string[] = [];
    const post = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i += 1000) {
        const k = Math.min(1000, n - i);
        const r = await client.submit(bulkBody('xrsl', kind, k, `m${posted}`), 'application/rsl');
        const ok = r.items.filter((x) => x.status === 201).length;
        if (ok !== k) throw new Error(`bulk POST ${posted}: ${ok} of ${k} created`);
        const fresh = r.items.flatMap((x) => (x.id === undefined ? [] : [x.id]));
        if (values.kill === true) await killJobs(client, fresh);
        else if (kind === 'running') ids.push(...fresh);
        posted += k;
        if (posted % 10_000 === 0) points.push(await point(pid, `${posted} jobs posted`, t0, metricsPort));
      }
    };
    await post(jobs);
    let settledS: number | undefined;
    if (values.kill === true) {
      // While the engine works through the kills: what it holds meanwhile.
      if (values.snapshot !== undefined) await heapSnapshot(pid, values.snapshot);
      settledS = await waitUntilNone(
        metricsPort,
        ['ACCEPTED', 'PENDING:ACCEPTED', 'PREPARING', 'SUBMIT', 'INLRMS', 'CANCELING', 'FINISHING'],
        1800,
      );
      points.push(await point(pid, `${jobs} jobs ended (${settledS} s after the last POST)`, t0, metricsPort));
    } else if (values.settle === true) {
      settledS = await waitUntilNone(metricsPort, ['ACCEPTED', 'PENDING:ACCEPTED', 'SUBMIT'], 1800);
      points.push(await point(pid, `${jobs} jobs settled (${settledS} s after the last POST)`, t0, metricsPort));
    }
    await sleep(20_000);
    points.push(await point(pid, `${jobs} jobs stored, 20 s after`, t0, metricsPort));
    if (values.snapshot !== undefined && values.kill !== true) await heapSnapshot(pid, values.snapshot);
    if (burst > 0) {
      await post(burst * 1000);
      points.push(await point(pid, `right after a burst of ${burst} bulk POSTs of 1,000`, t0, metricsPort));
      await sleep(idleS * 1000);
      points.push(await point(pid, `after the burst and ${idleS} s idle`, t0, metricsPort));
    }
    if (kind === 'running') {
      // The batch jobs outlive the service: killed here, and waited for.
      await killJobs(client, ids);
      points.push(await point(pid, `${ids.length} kills asked`, t0, metricsPort));
      const s = await waitUntilNone(metricsPort, ['SUBMIT', 'INLRMS', 'CANCELING', 'FINISHING'], 900);
      points.push(await point(pid, `every job ended (${s} s after the kills)`, t0, metricsPort));
    }
    await client.close();
  } finally {
    clearInterval(sampler);
    await service.stop();
  }
  await report(
    'ceres-bench-memory',
    {
      options: { jobs, kind, maxRunning, burst, idleS, settle: values.settle === true, kill: values.kill === true },
      readyS,
      peakHeapUsedMiB,
      points,
    },
    values.out,
  );
}

await main();
