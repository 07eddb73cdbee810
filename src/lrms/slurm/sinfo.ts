/**
 * The cluster as sinfo describes it: partitions with their limits and CPUs, and the
 * nodes (each counted once: a node may be in several partitions). Two sinfo calls per
 * refresh, whatever the number of jobs; job counts per partition come from the backend's
 * squeue poll. Pure parsers; the refresh lives in the backend.
 */
import type { BatchClusterInfo, BatchQueueInfo } from '../backend.js';
import { slurmDuration } from './scontrol.js';
import type { ParsedQueue } from './squeue.js';

export const SINFO_PARTITIONS_ARGS = ['--noheader', '--all', '--format=%R|%a|%l|%L|%C|%m'] as const;
export const SINFO_NODES_ARGS = ['--noheader', '--all', '--Node', '--format=%N|%C'] as const;

export interface PartitionLine {
  readonly name: string;
  readonly up: boolean;
  readonly maxWallTimeSeconds?: number;
  readonly defaultWallTimeSeconds?: number;
  readonly allocated: number;
  readonly idle: number;
  readonly total: number;
  /** Memory of the partition's largest node in MB (`%m`; `7900+` when nodes differ counts its least), if given. */
  readonly largestNodeMemoryMb?: number;
}

/** A Slurm time limit (`1:00:00`, `2-00:00:00`, `30`, `infinite`, `n/a`) in seconds; undefined when unlimited or unset. */
export function limitSeconds(v: string): number | undefined {
  if (v === 'infinite' || v === 'n/a' || v === 'UNLIMITED' || v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 60; // bare minutes
  const s = slurmDuration(v.includes(':') ? v : `${v}:00`);
  return s > 0 ? s : undefined;
}

/** `A/I/O/T` CPU counts (allocated, idle, other, total). */
function cpus(v: string): [number, number, number, number] | undefined {
  const m = /^(\d+)\/(\d+)\/(\d+)\/(\d+)$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] : undefined;
}

/** Partition lines, merged by name (sinfo splits a partition whose nodes differ). */
export function parsePartitions(stdout: string): PartitionLine[] {
  const by = new Map<string, PartitionLine>();
  for (const line of stdout.split('\n')) {
    const f = line.split('|');
    if (f.length !== 5 && f.length !== 6) continue;
    const [name, avail, limit, deflt, c, m] = f as [string, string, string, string, string, string | undefined];
    const n = cpus(c);
    if (name === '' || !n) continue;
    const prev = by.get(name);
    const max = limitSeconds(limit);
    const def = limitSeconds(deflt);
    const mem = /^(\d+)\+?$/.exec(m?.trim() ?? '')?.[1];
    const largest = Math.max(prev?.largestNodeMemoryMb ?? 0, mem !== undefined ? Number(mem) : 0);
    by.set(name, {
      name,
      up: avail === 'up',
      ...(max !== undefined ? { maxWallTimeSeconds: max } : {}),
      ...(def !== undefined ? { defaultWallTimeSeconds: def } : {}),
      allocated: (prev?.allocated ?? 0) + n[0],
      idle: (prev?.idle ?? 0) + n[1],
      total: (prev?.total ?? 0) + n[3],
      ...(largest > 0 ? { largestNodeMemoryMb: largest } : {}),
    });
  }
  return [...by.values()];
}

/** Node lines (`--Node`): the cluster's CPUs, each node once. */
export function parseNodes(stdout: string): { nodes: number; total: number; idle: number } {
  const seen = new Map<string, [number, number, number, number]>();
  for (const line of stdout.split('\n')) {
    const i = line.indexOf('|');
    if (i <= 0) continue;
    const n = cpus(line.slice(i + 1));
    if (n) seen.set(line.slice(0, i), n);
  }
  let total = 0;
  let idle = 0;
  for (const n of seen.values()) {
    total += n[3];
    idle += n[1];
  }
  return { nodes: seen.size, total, idle };
}

/** Running and waiting jobs per partition (a job pending in several partitions counts in each). */
function jobCounts(queue: ParsedQueue | undefined): Map<string, { running: number; waiting: number }> {
  const out = new Map<string, { running: number; waiting: number }>();
  for (const j of queue?.jobs.values() ?? []) {
    const running = j.state === 'RUNNING' || j.state === 'COMPLETING' || j.state === 'SUSPENDED';
    const waiting = j.state === 'PENDING' || j.state === 'REQUEUED';
    if (!running && !waiting) continue;
    for (const p of j.partition.split(',')) {
      const c = out.get(p) ?? { running: 0, waiting: 0 };
      if (running) c.running++;
      else c.waiting++;
      out.set(p, c);
    }
  }
  return out;
}

export function clusterInfo(
  partitions: readonly PartitionLine[],
  nodes: { nodes: number; total: number; idle: number },
  queue: ParsedQueue | undefined,
): BatchClusterInfo {
  const counts = jobCounts(queue);
  const queues: BatchQueueInfo[] = partitions.map((p) => ({
    name: p.name,
    up: p.up,
    ...(p.maxWallTimeSeconds !== undefined ? { maxWallTimeSeconds: p.maxWallTimeSeconds } : {}),
    ...(p.defaultWallTimeSeconds !== undefined ? { defaultWallTimeSeconds: p.defaultWallTimeSeconds } : {}),
    totalSlots: p.total,
    freeSlots: p.idle,
    ...(p.largestNodeMemoryMb !== undefined ? { largestNodeMemoryBytes: p.largestNodeMemoryMb * 1024 * 1024 } : {}),
    runningJobs: counts.get(p.name)?.running ?? 0,
    waitingJobs: counts.get(p.name)?.waiting ?? 0,
  }));
  return { totalSlots: nodes.total, freeSlots: nodes.idle, totalNodes: nodes.nodes, queues };
}
