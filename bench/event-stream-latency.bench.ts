/**
 * State change to event on an open job event stream, on the real service over real TLS:
 * one stream open, jobs submitted one at a time; for each, the time from the submission's
 * answer (the ACCEPTING event is stored before the 201 is sent) to its event on the stream.
 *
 * Run after building: node <build>/bench/event-stream-latency.bench.js [--jobs N]
 * Prints p50, p99 and the largest delay in ms.
 */
import { Client, removeDir, startCeres, stopCeres, tempDir } from '../test/helpers/service.js';
import { dataOf, openStream } from '../test/helpers/sse.js';

const argJobs = process.argv.indexOf('--jobs');
const N = argJobs > 0 ? Number(process.argv[argJobs + 1]) : 300;
const dir = tempDir('stream-bench');
// The jobs wait for an input file that never comes: only their submission changes state.
const ceres = await startCeres({ stateDir: dir, config: { cluster: { queues: [{ name: 'main' }] } } });
const c = Client.forUser(ceres);
try {
  const s = await openStream(c.agent, `${ceres.url}/rest/1.1/jobs`);
  const delays: number[] = [];
  const seen = new Map<string, number>();
  s.onEvent = (e) => {
    if (e.event === 'state') seen.set(dataOf(e).id as string, performance.now());
  };
  for (let i = 0; i < N; i++) {
    const id = ((await c.submit('&(executable="/bin/echo")(inputfiles=("never" ""))')) as { id: string }[])[0]!.id;
    const t0 = performance.now();
    await s.waitFor((e) => e.event === 'state' && dataOf(e).id === id, 'the event', 10_000);
    // Timed when parsed, not when the poll above noticed; an event before the answer counts 0.
    delays.push(Math.max(0, seen.get(id)! - t0));
  }
  s.close();
  delays.sort((a, b) => a - b);
  const q = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))]!.toFixed(1);
  console.log(`${N} state changes: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`);
} finally {
  await c.close();
  await stopCeres(ceres);
  removeDir(dir);
}
