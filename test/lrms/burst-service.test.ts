// Bursts of trivial jobs through the real service: every acknowledged job reaches
// FINISHED, also when the service is killed (-9) in the middle and restarted on the
// same state directory, and each ran exactly once (one attempt directory, claimed by
// one wrapper, with its status file).
//
// Sizes: a short version runs in `npm test`; CERES_BURST_FULL=1 runs the full one
// (5,000 jobs in one request, then 10 x 1,000 in quick succession).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

const FULL = process.env.CERES_BURST_FULL === '1';
const SIZES = FULL ? { one: 5000, many: 10, each: 1000 } : { one: 500, many: 5, each: 100 };
const TRUE_JOB = '(&(executable="/bin/true"))';
const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

/** Submit `n` /bin/true jobs in one multi-job xRSL request. */
async function submit(c: Client, n: number): Promise<string[]> {
  const items = await c.submit(`+${TRUE_JOB.repeat(n)}`);
  assert.equal(items.length, n);
  for (const i of items) assert.equal(String(i['status-code']), '201', JSON.stringify(i));
  return items.map((i) => i.id as string);
}

/** One request of `one` jobs, then `many` requests of `each`, sent back to back. */
async function burst(c: Client, sizes: typeof SIZES): Promise<string[]> {
  const ids = await submit(c, sizes.one);
  for (let k = 0; k < sizes.many; k++) ids.push(...(await submit(c, sizes.each)));
  return ids;
}

async function states(c: Client, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 5000) for (const [k, v] of await c.status(ids.slice(i, i + 5000))) out.set(k, v);
  return out;
}

async function waitAllFinal(c: Client, ids: readonly string[], timeoutMs: number): Promise<Map<string, string>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const st = await states(c, ids);
    const open = [...st.values()].filter((s) => !FINAL.includes(s)).length;
    if (open === 0 || Date.now() > end) return st;
    await new Promise((r) => setTimeout(r, 500));
  }
}

function countFinished(st: Map<string, string>): number {
  return [...st.values()].filter((s) => s === 'FINISHED').length;
}

/** The job ran exactly once: one attempt directory, one wrapper's pid file and its status. */
function ranOnce(state: string, id: string): string | undefined {
  const jobDir = join(state, 'lrms', 'jobs', id.slice(0, 2), id);
  const attempts = existsSync(jobDir) ? readdirSync(jobDir) : [];
  if (attempts.length !== 1) return `${attempts.length} attempt directories`;
  const dir = join(jobDir, attempts[0] as string);
  if (!/^\d+ \d+\n$/.test(readFileSync(join(dir, 'pid'), 'utf8'))) return 'no single wrapper record';
  if (!/^exitcode=0$/m.test(readFileSync(join(dir, 'status'), 'utf8'))) return 'no successful status';
  return undefined;
}

function assertAllRanOnce(ceres: RunningCeres, ids: readonly string[]): void {
  const wrong = ids.map((id) => [id, ranOnce(ceres.stateDir, id)]).filter(([, why]) => why !== undefined);
  assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} jobs did not run exactly once`);
}

describe(`bursts of short jobs through the service (${FULL ? 'full' : 'short'} size)`, () => {
  it(`${SIZES.one} jobs in one request, then ${SIZES.many} x ${SIZES.each}: all FINISHED`, async () => {
    const ceres = await startCeres();
    const c = Client.forUser(ceres);
    try {
      const t0 = Date.now();
      const ids = await burst(c, SIZES);
      const st = await waitAllFinal(c, ids, FULL ? 600_000 : 180_000);
      const stuck = [...st].filter(([, s]) => s !== 'FINISHED');
      assert.deepEqual(stuck.slice(0, 5), [], `${stuck.length} of ${ids.length} jobs not FINISHED`);
      process.stderr.write(`# ${ids.length} jobs FINISHED in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
      assertAllRanOnce(ceres, ids);
    } finally {
      await c.close();
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it('the same with kill -9 of the service in the middle: every acknowledged job FINISHED, each ran once', async () => {
    const dir = tempDir('burst-crash');
    const state = join(dir, 'state');
    const first = await startCeres({ stateDir: state });
    const c1 = Client.forUser(first);
    let ids: string[];
    try {
      ids = await burst(c1, SIZES);
      process.stderr.write(`# ${ids.length} jobs acknowledged\n`);
      // Kill it once part of the jobs have ended and the rest are queued, starting or running.
      const end = Date.now() + 120_000;
      while (countFinished(await states(c1, ids)) < ids.length / 5 && Date.now() < end)
        await new Promise((r) => setTimeout(r, 200));
    } finally {
      await stopCeres(first, 'SIGKILL');
      await c1.close();
    }
    process.stderr.write('# killed (-9); restarting\n');
    const second = await startCeres({ stateDir: state });
    const c2 = Client.forUser(second);
    try {
      const st = await waitAllFinal(c2, ids, FULL ? 600_000 : 180_000);
      const stuck = [...st].filter(([, s]) => s !== 'FINISHED');
      assert.deepEqual(stuck.slice(0, 5), [], `${stuck.length} of ${ids.length} jobs not FINISHED`);
      assertAllRanOnce(second, ids);
    } finally {
      await c2.close();
      await stopCeres(second);
      removeDir(dir);
    }
  });
});
