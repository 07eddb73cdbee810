/**
 * `npm run build && node dist/bench/proc-scan-memory.js [--passes 3500]`
 *
 * What the fork backend's process scanning thread (src/lrms/fork/proc-scanner.ts) costs
 * in resident memory: the process's RSS before the thread starts, after one pass over
 * /proc, after `--passes` passes back to back (a service that sweeps continuously, as
 * under the soak mix), and after the thread is stopped; and the time per pass.
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { ProcScanner } from '../src/lrms/fork/proc-scanner.js';

const { values } = parseArgs({ options: { passes: { type: 'string', default: '3500' } } });
const passes = Number(values.passes);
const rss = (): number => Math.round((process.memoryUsage().rss / 1048576) * 10) / 10;
const job = [{ mark: 'ceres-bench-no-such-mark' }];
const spare = new Set([process.pid]);

const scanner = new ProcScanner();
const out: Record<string, number> = { startMiB: rss() };
await scanner.scan(job, spare);
out.onePassMiB = rss();
const t0 = performance.now();
for (let i = 0; i < passes; i++) await scanner.scan(job, spare);
out.msPerPass = Math.round(((performance.now() - t0) / passes) * 100) / 100;
out.afterPassesMiB = rss();
await scanner.close();
await new Promise((resolve) => setTimeout(resolve, 500));
out.closedMiB = rss();
console.log(JSON.stringify({ passes, ...out }));
