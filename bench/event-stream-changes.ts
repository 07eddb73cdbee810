/**
 * The state changes the job event stream benchmarks make (event-stream-setup.ts): through
 * a JobStore, the compare-and-set statement the engine runs for every transition, whose
 * triggers write the event rows. Kept apart from the setup so that the in-service driver
 * (event-stream-driver.ts), which runs inside the measured service, loads nothing else.
 */
import type { JobStore } from '../src/store/job-store.js';

/** One change through the store: RUNNING -> FINISHED, exit code 0 (false: not changed). */
export function finish(store: JobStore, id: string): boolean {
  const j = store.get(id);
  return j !== undefined && store.update(j, { restState: 'FINISHED', exitCode: 0 }) !== undefined;
}

/**
 * One change that can be made again and again: RUNNING -> FINISHED (exit code 0), or back
 * (false: not changed). For runs that change each job many times.
 */
export function flip(store: JobStore, id: string): boolean {
  const j = store.get(id);
  if (j === undefined) return false;
  const changes =
    j.restState === 'RUNNING' ? { restState: 'FINISHED', exitCode: 0 } : { restState: 'RUNNING', exitCode: null };
  return store.update(j, changes) !== undefined;
}

/**
 * Makes the changes `ids` evenly over `ms` (a slice every `tickMs`), each through
 * `change`; resolves with the driver's own CPU time (µs), measured around its calls.
 */
export async function drive(
  ids: readonly string[],
  ms: number,
  change: (id: string) => boolean,
  tickMs = 50,
): Promise<{ changed: number; driverCpuUs: number }> {
  const t0 = performance.now();
  let done = 0;
  let changed = 0;
  let cpu = 0;
  while (done < ids.length) {
    const due = Math.min(ids.length, Math.ceil((ids.length * (performance.now() - t0 + tickMs)) / ms));
    const c0 = process.cpuUsage();
    for (; done < due; done++) if (change(ids[done]!)) changed++;
    const c = process.cpuUsage(c0);
    cpu += c.user + c.system;
    await new Promise((r) => setTimeout(r, tickMs));
  }
  return { changed, driverCpuUs: cpu };
}
