/**
 * Waiting for a quiet machine before a measurement. Two things can be busy:
 *  - the endpoint itself, still working off what the previous scenario gave it (Ceres
 *    finishing 1,000 killed jobs, A-REX's job manager processing a bulk submission);
 *    measuring then measures that backlog, so this wait is long (serverWaitS);
 *  - the rest of the machine (other builds and tests on the shared VM), which the
 *    harness cannot end, so that wait is short (maxWaitS) and only recorded.
 * The endpoint counts as idle below 5 % of one core over one second, the machine as
 * quiet below `thresholdPct` of one core. What was seen is recorded either way.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSeconds, machineCpu } from './proc.js';
import type { QuietReport } from './results.js';

export const SERVER_IDLE_PCT = 5;

export interface QuietOptions {
  /** Longest wait for the whole machine. */
  readonly maxWaitS: number;
  /** Longest wait for the endpoint's own processes (when their pids are known). */
  readonly serverWaitS?: number;
  readonly pids?: readonly number[];
  readonly thresholdPct?: number;
  readonly onWait?: (busyPct: number, serverPct: number | undefined, waitedS: number) => void;
}

/** Whether to stop waiting, given what the last second showed (pure, for tests). */
export function doneWaiting(o: {
  busyPct: number;
  serverPct: number | undefined;
  waitedS: number;
  maxWaitS: number;
  serverWaitS: number;
  thresholdPct: number;
}): boolean {
  const serverIdle = o.serverPct === undefined || o.serverPct < SERVER_IDLE_PCT;
  if (!serverIdle) return o.waitedS >= o.serverWaitS;
  return o.busyPct < o.thresholdPct || o.waitedS >= o.maxWaitS;
}

export async function waitForQuiet(o: QuietOptions): Promise<QuietReport> {
  const cores = Math.max(1, cpus().length);
  const threshold = o.thresholdPct ?? 15;
  const pids = o.pids ?? [];
  const serverWaitS = Math.max(o.serverWaitS ?? o.maxWaitS, o.maxWaitS);
  const t0 = Date.now();
  for (;;) {
    const a = await machineCpu();
    const s0 = pids.length ? await cpuSeconds(pids) : undefined;
    const m0 = Date.now();
    await sleep(1000);
    const b = await machineCpu();
    const s1 = pids.length ? await cpuSeconds(pids) : undefined;
    const span = (Date.now() - m0) / 1000;
    if (a === undefined || b === undefined) return { waitedS: 0, busyPct: Number.NaN, quiet: true };
    const total = b.total - a.total;
    const busyPct = total > 0 ? (100 * (b.busy - a.busy)) / (total / cores) : 0;
    const serverPct = s0 !== undefined && s1 !== undefined ? (100 * (s1 - s0)) / span : undefined;
    const waitedS = (Date.now() - t0) / 1000;
    if (doneWaiting({ busyPct, serverPct, waitedS, maxWaitS: o.maxWaitS, serverWaitS, thresholdPct: threshold })) {
      const serverIdle = serverPct === undefined || serverPct < SERVER_IDLE_PCT;
      return {
        waitedS,
        busyPct,
        quiet: busyPct < threshold && serverIdle,
        ...(serverPct !== undefined ? { serverBusyPct: serverPct } : {}),
      };
    }
    o.onWait?.(busyPct, serverPct, waitedS);
  }
}
