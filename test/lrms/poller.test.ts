// The shared poll loop (src/lrms/core/poller.ts): one pass at a time, one question per
// interval, soon() for a pass without waiting an interval (a cancel), also when it comes
// during a pass; nothing after close, and no question while idle.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Poller } from '../../src/lrms/core/poller.js';
import { until } from './backend.case.js';

/** Closed after each test, passed or not: a pending timer would keep the file running. */
const pollers: Poller<number>[] = [];

/** A poller whose question takes `askMs`, recording when each question started. */
function recorder(
  intervalMs: number,
  askMs: number,
  o: { busy?: () => boolean; fail?: boolean; answerMs?: number } = {},
) {
  const asked: number[] = [];
  const failures: number[] = [];
  let running = 0;
  let overlap = false;
  const poller = new Poller<number>(intervalMs, {
    ask: async () => {
      asked.push(Date.now());
      if (++running > 1) overlap = true;
      await new Promise((r) => setTimeout(r, askMs));
      running--;
      if (o.fail) throw new Error('the batch system is down');
      return asked.length;
    },
    // Ceres's own work on the answer (the job table's pass).
    onAnswer: async () => {
      if (o.answerMs) await new Promise((r) => setTimeout(r, o.answerMs));
    },
    onFailure: async (_e, streak) => void failures.push(streak),
    busy: o.busy ?? (() => true),
  });
  pollers.push(poller);
  return { poller, asked, failures, overlap: () => overlap };
}

/** The times between the starts of four passes of a poller left to itself. */
async function startGaps(intervalMs: number, askMs: number, answerMs = 0): Promise<number[]> {
  const r = recorder(intervalMs, askMs, { answerMs });
  r.poller.wake();
  await until('four passes', () => r.asked.length >= 4, 20_000);
  r.poller.close();
  return r.asked.slice(1, 4).map((t, i) => t - (r.asked[i] ?? 0));
}

describe('the poll loop', () => {
  afterEach(() => {
    for (const p of pollers.splice(0)) p.close();
  });
  it('asks once per interval, never two passes at once', async () => {
    const r = recorder(100, 30);
    r.poller.wake();
    r.poller.wake(); // idempotent
    await until('four passes', () => r.asked.length >= 4, 10_000);
    r.poller.close();
    assert.equal(r.overlap(), false);
    for (let i = 1; i < r.asked.length; i++) {
      assert.ok((r.asked[i] ?? 0) - (r.asked[i - 1] ?? 0) >= 95, 'about an interval between questions');
    }
  });

  it('passes begin an interval apart, counted from the start of the last, not its end', async () => {
    // A pass of 300 ms in an interval of 1 s: every 1 s, not every 1.3 s.
    const gaps = await startGaps(1000, 300);
    for (const g of gaps) assert.ok(g >= 990 && g < 1250, `start to start ${g} ms (gaps ${gaps.join(', ')})`);
  });

  it('a question longer than half the interval is followed by a rest as long as itself', async () => {
    // 300 ms questions in an interval of 200 ms: the controller is asked at most half the time.
    const gaps = await startGaps(200, 300);
    for (const g of gaps) assert.ok(g >= 590, `start to start ${g} ms (gaps ${gaps.join(', ')})`);
  });

  it("the rest counts the question only, not Ceres's work on its answer", async () => {
    // Asked 200 ms, then 400 ms of the backend's own: the batch system rested 400 ms after
    // answering, so the next pass begins an interval after this one, not 1.2 s.
    const gaps = await startGaps(1000, 200, 400);
    for (const g of gaps) assert.ok(g >= 990 && g < 1150, `start to start ${g} ms (gaps ${gaps.join(', ')})`);
  });

  it('a slow question followed by long work: the rest still makes up the question', async () => {
    // Asked 300 ms, 100 ms of work, interval 200 ms: the next question 300 ms after the answer.
    const gaps = await startGaps(200, 300, 100);
    for (const g of gaps) assert.ok(g >= 590 && g < 900, `start to start ${g} ms (gaps ${gaps.join(', ')})`);
  });

  it('soon() between passes runs one without waiting the interval', async () => {
    const r = recorder(60_000, 10);
    r.poller.wake();
    const t0 = Date.now();
    r.poller.soon();
    await until('a pass', () => r.asked.length === 1, 10_000);
    assert.ok(Date.now() - t0 < 30_000, 'not an interval later');
    r.poller.close();
  });

  it('soon() during a pass: the next pass follows that one at once, not an interval later', async () => {
    const r = recorder(60_000, 300);
    r.poller.soon();
    await until('the first pass under way', () => r.asked.length === 1, 10_000);
    r.poller.soon(); // a cancel while squeue runs: its question may predate the cancel
    await until('a second pass', () => r.asked.length === 2, 20_000);
    assert.equal(r.overlap(), false, 'after the first, not beside it');
    r.poller.close();
  });

  it('soon() several times during a pass adds one pass, not one each', async () => {
    const r = recorder(60_000, 300);
    r.poller.soon();
    await until('the first pass under way', () => r.asked.length === 1, 10_000);
    for (let i = 0; i < 5; i++) r.poller.soon();
    await until('a second pass', () => r.asked.length === 2, 20_000);
    await new Promise((res) => setTimeout(res, 800));
    assert.equal(r.asked.length, 2, 'then the interval again');
    r.poller.close();
  });

  it('a failed question is reported with its streak and asked again at the next interval', async () => {
    const r = recorder(50, 5, { fail: true });
    r.poller.wake();
    await until('three failures', () => r.failures.length >= 3, 10_000);
    r.poller.close();
    assert.deepEqual(r.failures.slice(0, 3), [1, 2, 3]);
  });

  it('closed during a pass (soon() pending): no pass after it', async () => {
    const r = recorder(50, 200);
    r.poller.soon();
    await until('the first pass under way', () => r.asked.length === 1, 10_000);
    r.poller.soon();
    r.poller.close();
    await new Promise((res) => setTimeout(res, 600));
    assert.equal(r.asked.length, 1);
    r.poller.soon(); // after close: nothing
    r.poller.wake();
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(r.asked.length, 1);
  });

  it('idle (no job to watch): no question, not even after soon()', async () => {
    const r = recorder(50, 5, { busy: () => false });
    r.poller.wake();
    r.poller.soon();
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(r.asked.length, 0);
    r.poller.close();
  });
});
