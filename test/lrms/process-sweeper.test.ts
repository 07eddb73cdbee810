// The process sweeper (src/lrms/fork/job-processes.ts, proc-scanner.ts). Its failure path:
// a pass that throws must reach the callers of sweep(), never leave them waiting nor
// surface as an unhandled rejection, and the next sweep still runs.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ProcessSweeper } from '../../src/lrms/fork/job-processes.js';
import { ProcScanner } from '../../src/lrms/fork/proc-scanner.js';

const job = { mark: 'ceres-sweeper-test-no-such-mark' };

it('a failing pass rejects every sweep of its batch, and a later sweep runs again', async () => {
  let fail = true;
  const sweeper = new ProcessSweeper(() => {
    if (fail) throw new Error('spare set unavailable');
    return new Set([process.pid]);
  });
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => void unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const outcomes = await Promise.race([
      Promise.allSettled([sweeper.sweep(job), sweeper.sweep(job)]),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref()),
    ]);
    assert.notEqual(outcomes, 'hung', 'sweep() never settled');
    for (const o of outcomes as PromiseSettledResult<void>[]) {
      assert.equal(o.status, 'rejected');
      assert.match(String(o.reason), /spare set unavailable/);
    }
    fail = false;
    await sweeper.sweep(job);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

// A pass used to read /proc through the thread pool: two reads per process on the host.
// Under load that queued every file operation of the service behind it, and while the
// pool was busy no sweep (no clean, no kill) could finish. The pass now runs on a thread
// of its own: with every pool thread blocked, a sweep still finishes. (Starting the thread
// loads its module through the pool, a few tasks once; it is started before the pool fills.)
it('a sweep finishes while every thread of the pool is blocked', async (t) => {
  const sweeper = new ProcessSweeper(() => new Set([process.pid]));
  await sweeper.sweep(job);
  const dir = await mkdtemp(join(tmpdir(), 'ceres-sweeper-'));
  const pool = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const fifos = Array.from({ length: pool + 2 }, (_, i) => join(dir, `f${i}`));
  for (const f of fifos) execFileSync('mkfifo', [f]);
  // Opening a FIFO for reading blocks its pool thread until a writer comes.
  const settled = new Set<number>();
  const blocked = fifos.map((f, i) =>
    readFile(f).then(
      () => settled.add(i),
      () => settled.add(i),
    ),
  );
  t.after(async () => {
    // Release every reader, including those that were queued behind the blocked ones and
    // only open their FIFO once a thread is free: a writer can only open a FIFO that has a
    // reader waiting, so keep trying until every read has ended.
    for (let round = 0; settled.size < fifos.length && round < 500; round++) {
      fifos.forEach((f, i) => {
        if (settled.has(i)) return;
        try {
          closeSync(openSync(f, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          /* its reader is not waiting yet */
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(blocked);
    await sweeper.close();
    await rm(dir, { recursive: true, force: true });
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const outcome = await Promise.race([
    sweeper.sweep(job).then(() => 'swept'),
    new Promise<string>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref()),
  ]);
  assert.equal(outcome, 'swept');
});

it('the scanning thread stops when idle and starts again for the next pass', async () => {
  const scanner = new ProcScanner({ idleMs: 50 });
  try {
    assert.equal(await scanner.scan([job], new Set([process.pid])), 0);
    assert.equal(scanner.running, true);
    for (let i = 0; i < 100 && scanner.running; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(scanner.running, false, 'thread stopped after the idle time');
    assert.equal(await scanner.scan([job], new Set([process.pid])), 0);
    assert.equal(scanner.started, 2);
  } finally {
    await scanner.close();
  }
});

it('a pass that never answers fails after its timeout, and the next pass gets a fresh thread', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ceres-sweeper-'));
  const hang = join(dir, 'hang.mjs');
  // What a read stuck on a process's memory-map lock looks like from outside: no answer.
  await writeFile(
    hang,
    "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => { for (;;); });\n",
  );
  const scanner = new ProcScanner({ passTimeoutMs: 300, workerUrl: pathToFileURL(hang) });
  t.after(async () => {
    await scanner.close();
    await rm(dir, { recursive: true, force: true });
  });
  await assert.rejects(scanner.scan([job], new Set()), /did not finish within 0.3 s/);
  assert.equal(scanner.running, false, 'the stuck thread was let go');
  await assert.rejects(scanner.scan([job], new Set()), /did not finish/);
  assert.equal(scanner.started, 2);
});
