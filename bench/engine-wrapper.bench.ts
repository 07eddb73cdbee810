/**
 * Fork backend throughput and latency, without the rest of the service:
 *  - latency: one trivial job (/bin/true) at a time, submit() → final update (median, p99);
 *  - drain: N trivial jobs submitted at once, time until every final update arrived.
 * The goals of issue 5 (submit → FINISHED well under 0.2 s, 1,000 jobs drained in < 10 s)
 * include the scheduler and the database; this measures the backend's share.
 *
 *   node dist/bench/engine-wrapper.bench.js [--wrapper c|sh] [--latency 100] [--drain 1000]
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ForkBackend } from '../src/lrms/fork/fork-backend.js';
import type { BatchJobSpec } from '../src/lrms/backend.js';

export interface WrapperBenchResult {
  readonly wrapper: string;
  readonly latencyMedianMs: number;
  readonly latencyP99Ms: number;
  readonly drainJobs: number;
  readonly drainSeconds: number;
  readonly jobsPerSecond: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export async function runWrapperBench(
  opts: { wrapper?: 'c' | 'sh'; latencyJobs?: number; drainJobs?: number } = {},
): Promise<WrapperBenchResult> {
  const root = await mkdtemp(join(tmpdir(), 'ceres-bench-fork-'));
  const backend = await ForkBackend.create({ workDir: join(root, 'backend'), wrapper: opts.wrapper ?? 'c' });
  const waiting = new Map<string, () => void>();
  const early = new Set<string>();
  backend.onUpdate((localId, u) => {
    if (u.kind !== 'final') return;
    const w = waiting.get(localId);
    if (w) w();
    else early.add(localId);
  });
  let n = 0;
  const spec = async (): Promise<BatchJobSpec> => {
    const i = ++n;
    const sessionDir = join(root, `s${i}`);
    await mkdir(sessionDir);
    return {
      jobId: `b${i}`,
      sessionDir,
      lrmsDir: join(root, `l${i}`),
      executable: '/bin/true',
      arguments: [],
      environment: [],
      runtimeEnvironments: [],
      limits: {},
      slots: 1,
    };
  };
  const runOne = async (s: BatchJobSpec): Promise<void> => {
    const id = await backend.submit(s);
    if (early.delete(id)) return;
    await new Promise<void>((resolve) => waiting.set(id, resolve));
    waiting.delete(id);
  };
  try {
    await runOne(await spec()); // starts the launcher
    const lat: number[] = [];
    for (let i = 0; i < (opts.latencyJobs ?? 100); i++) {
      const s = await spec();
      const t0 = performance.now();
      await runOne(s);
      lat.push(performance.now() - t0);
    }
    lat.sort((a, b) => a - b);
    const drainJobs = opts.drainJobs ?? 1000;
    const specs = await Promise.all(Array.from({ length: drainJobs }, spec));
    const t0 = performance.now();
    await Promise.all(specs.map(runOne));
    const drainSeconds = (performance.now() - t0) / 1000;
    return {
      wrapper: backend.wrapper.kind,
      latencyMedianMs: quantile(lat, 0.5),
      latencyP99Ms: quantile(lat, 0.99),
      drainJobs,
      drainSeconds,
      jobsPerSecond: drainJobs / drainSeconds,
    };
  } finally {
    await backend.close();
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const wrapper = arg('wrapper') === 'sh' ? 'sh' : 'c';
  const r = await runWrapperBench({
    wrapper,
    latencyJobs: Number(arg('latency') ?? 100),
    drainJobs: Number(arg('drain') ?? 1000),
  });
  console.log(JSON.stringify(r, null, 2));
}
