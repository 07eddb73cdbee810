/**
 * Grid Engine's answers, parsed: `qstat -u '*' -xml` (every job of every user in one
 * call: the poll; its scanner is ./qstat-xml.ts), `qstat -j ID` (a job's error reason),
 * `qstat -g c` (per queue slot figures), `qhost` (the execution hosts), `qacct -j ID` (a
 * finished job's accounting record).
 */
import type { BatchClusterInfo, BatchQueueInfo } from '../backend.js';
import type { GeJob } from './qstat-xml.js';

export const QSTAT_ARGS = ['-u', '*', '-xml'] as const;
export const QSTAT_QUEUES_ARGS = ['-g', 'c'] as const;

export { parseQstatXml, type GeJob } from './qstat-xml.js';

/** The `error reason` lines of `qstat -j ID`, joined. */
export function errorReason(text: string): string {
  return text
    .split('\n')
    .filter((l) => /^error reason\s+\d+:/.test(l))
    .map((l) => l.replace(/^error reason\s+\d+:\s*/, '').trim())
    .join('; ')
    .slice(0, 300);
}

/** `qstat -g c`: CLUSTER QUEUE, CQLOAD, USED, RES, AVAIL, TOTAL, aoACDS, cdsuE. */
export function parseQueueSummary(
  text: string,
): { name: string; used: number; avail: number; total: number; down: number }[] {
  const out: { name: string; used: number; avail: number; total: number; down: number }[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8 || !/^\d+$/.test(f[2] ?? '')) continue;
    out.push({
      name: f[0] as string,
      used: Number(f[2]),
      avail: Number(f[4]),
      total: Number(f[5]),
      down: Number(f[7]),
    });
  }
  return out;
}

/**
 * The execution hosts `qhost` lists: the lines below its header and dashes, without the
 * `global` pseudo host.
 */
export function parseQhost(text: string): string[] {
  const lines = text.split('\n');
  const from = lines.findIndex((l) => /^-{10,}\s*$/.test(l));
  if (from < 0) return [];
  return lines
    .slice(from + 1)
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((h) => h !== '' && h !== 'global');
}

/** The cluster figures from the queue summary, the execution hosts and the jobs of the last poll. */
export function clusterInfo(
  summary: ReturnType<typeof parseQueueSummary>,
  jobs: ReadonlyMap<string, GeJob>,
  hosts: readonly string[] = [],
): BatchClusterInfo {
  let waiting = 0;
  const running = new Map<string, number>();
  for (const j of jobs.values()) {
    if (/[rt]/.test(j.state) && j.queue) {
      const q = j.queue.split('@')[0] as string;
      running.set(q, (running.get(q) ?? 0) + 1);
    } else if (j.state.includes('q')) waiting++;
  }
  const queues: BatchQueueInfo[] = summary.map((q) => ({
    name: q.name,
    // Every instance of the queue disabled, suspended, unknown or in error: nothing starts there.
    up: q.total > 0 && q.down < q.total,
    totalSlots: q.total,
    freeSlots: q.avail,
    runningJobs: running.get(q.name) ?? 0,
    // A waiting job names no queue until it is scheduled: counted in each.
    waitingJobs: waiting,
  }));
  return {
    totalSlots: queues.reduce((n, q) => n + q.totalSlots, 0),
    freeSlots: queues.reduce((n, q) => n + q.freeSlots, 0),
    totalNodes: hosts.length,
    queues,
  };
}

export interface GeAccounting {
  readonly failed: number;
  readonly exitStatus: number;
  readonly failedText: string;
}

/** `qacct -j ID`: the last record (a re-run job has several). */
export function parseQacct(text: string): GeAccounting | undefined {
  const records = text.split(/^=+$/m).filter((r) => /^exit_status\s/m.test(r));
  const r = records.at(-1);
  if (r === undefined) return undefined;
  const failed = /^failed\s+(\d+)\s*(?::\s*(.*))?$/m.exec(r);
  return {
    failed: Number(failed?.[1] ?? 0),
    failedText: (failed?.[2] ?? '').trim(),
    exitStatus: Number(/^exit_status\s+(\d+)/m.exec(r)?.[1] ?? 0),
  };
}

/** A command's answer that the job id is unknown (qstat -j, qdel, qacct). */
export const isUnknownJob = (message: string): boolean =>
  /do(?:es)? not exist|not found|Following jobs do not exist/i.test(message);
