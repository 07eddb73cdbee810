/**
 * Waiting for a quiet machine before a measurement. The machine is shared (other
 * processes, the other endpoint finishing its own work), and a run that starts while
 * something else burns a core measures that something. We wait until the whole
 * machine used less than `thresholdPct` of one core over one second, or until
 * `maxWaitS` has passed, and record what we saw either way.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { machineCpu } from './proc.js';
import type { QuietReport } from './results.js';

export async function waitForQuiet(maxWaitS: number, thresholdPct = 15, onWait?: (busyPct: number, waitedS: number) => void): Promise<QuietReport> {
  const cores = Math.max(1, cpus().length);
  const t0 = Date.now();
  let busyPct = Number.NaN;
  for (;;) {
    const a = await machineCpu();
    await sleep(1000);
    const b = await machineCpu();
    if (a === undefined || b === undefined) return { waitedS: 0, busyPct: Number.NaN, quiet: true };
    const total = b.total - a.total;
    busyPct = total > 0 ? (100 * (b.busy - a.busy)) / (total / cores) : 0;
    const waitedS = (Date.now() - t0) / 1000;
    if (busyPct < thresholdPct) return { waitedS, busyPct, quiet: true };
    if (waitedS >= maxWaitS) return { waitedS, busyPct, quiet: false };
    onWait?.(busyPct, waitedS);
  }
}
