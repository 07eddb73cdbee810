/**
 * The memory figures of a running Ceres, shared by bench/memory.ts and
 * bench/memory-stored.ts: VmRSS and /proc/<pid>/smaps_rollup (anonymous vs
 * file-backed), the malloc heap ([heap] in smaps) and V8's own figures from the
 * service's loopback /metrics listener.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { createServer, type AddressInfo } from 'node:net';

export interface Point {
  readonly label: string;
  readonly s: number;
  readonly rssMiB: number;
  readonly anonMiB: number;
  readonly fileMiB: number;
  readonly mallocHeapMiB: number;
  /** V8's figures, read from the service's own /metrics: heap committed and used, external memory. */
  readonly v8?: { readonly heapTotalMiB: number; readonly heapUsedMiB: number; readonly externalMiB: number };
}

/** A free loopback port for the service's metrics listener. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

async function v8Figures(metricsPort: number): Promise<Point['v8']> {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const val = (name: string): number =>
    Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  const m = (b: number): number => Math.round(b / 104857.6) / 10;
  return {
    heapTotalMiB: m(val('nodejs_heap_size_total_bytes')),
    heapUsedMiB: m(val('nodejs_heap_size_used_bytes')),
    externalMiB: m(val('nodejs_external_memory_bytes')),
  };
}

const mib = (kib: number): number => Math.round(kib / 102.4) / 10;

export async function point(pid: number, label: string, t0: number, metricsPort?: number): Promise<Point> {
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
    ...(metricsPort === undefined ? {} : { v8: await v8Figures(metricsPort) }),
  };
}

/** Prints the result document (and writes it to `out` when given), with the run's launcher settings. */
export async function report(tool: string, fields: Record<string, unknown>, out: string | undefined): Promise<void> {
  const doc = {
    tool,
    date: new Date().toISOString(),
    malloc: process.env.CERES_MALLOC === 'jemalloc' ? 'jemalloc' : 'system',
    nodeFlags: process.env.CERES_NODE_FLAGS ?? '',
    ...fields,
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (out) await writeFile(out, text);
  process.stdout.write(text);
}
