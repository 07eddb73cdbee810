// The event stream's `batch=<ms>` extension on the real service over real TLS: events
// gathered into one write (counted as the chunks the client reads), the same events as an
// unbatched stream, gathered events carried by the end of a stopping service and resumed
// after its restart without a gap, a period's changes past the backlog bound going out in
// parts (never ending the stream), and bad values a 400.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { dataOf, openStream, type SseEvent, type SseStream } from '../helpers/sse.js';
import { until } from '../helpers/poll.js';

const BUFFER = 64 * 1024;
const CONFIG = {
  cluster: { queues: [{ name: 'main' }] },
  events: { heartbeatSeconds: 120, streamBufferBytes: BUFFER },
};
/** Jobs that wait for an input that never comes: only their submission is an event. */
const waiting = (n: number, tag: string): string =>
  `+${Array.from({ length: n }, (_, i) => `(&(executable="/bin/echo")(inputfiles=("never" ""))(jobname="${tag}-${i}"))`).join('')}`;
const FINAL = ['FINISHED', 'FAILED', 'KILLED'];
const isEnd = (id: string) => (e: SseEvent) =>
  e.event === 'state' && e.data.includes(id) && FINAL.includes(dataOf(e).state);

describe('job event stream batch= (real service, real TLS)', () => {
  const stateDir = tempDir('stream-batch');
  let ceres: RunningCeres;
  let c: Client;
  const open: SseStream[] = [];
  const follow = async (path: string, headers: Record<string, string> = {}): Promise<SseStream> => {
    const s = await openStream(c.agent, `${ceres.url}${path}`, { ...c.headers, ...headers });
    open.push(s);
    return s;
  };
  /** A raw stream that counts the chunks carrying events, and when each came. */
  const counted = async (path: string) => {
    const ac = new AbortController();
    const r = await request(`${ceres.url}${path}`, {
      dispatcher: c.agent,
      headers: { accept: 'text/event-stream' },
      signal: ac.signal,
    });
    assert.equal(r.statusCode, 200);
    const seen = { chunks: [] as number[], events: 0, text: '' };
    r.body.setEncoding('utf8');
    r.body.on('data', (chunk: string) => {
      seen.text += chunk;
      const n = seen.text.split('event: state\n').length - 1;
      if (n > seen.events) seen.chunks.push(Date.now());
      seen.events = n;
    });
    r.body.on('error', () => {});
    return { seen, close: () => ac.abort() };
  };
  before(async () => {
    ceres = await startCeres({ stateDir, config: CONFIG });
    c = Client.forUser(ceres);
  });
  after(async () => {
    for (const s of open) s.close();
    await c.close();
    await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('events of several changes a little apart go out in one write, after the period', async () => {
    const s = await counted('/rest/1.1/jobs?state=ACCEPTING&batch=3000');
    try {
      const t0 = Date.now();
      for (let i = 0; i < 5; i++) {
        await c.submit(waiting(10, `spread-${i}`));
        await new Promise((r) => setTimeout(r, 100));
      }
      await until(() => s.seen.events >= 50, 'the 50 submissions on the stream', 20_000);
      // Without batch= each submission request is its own read and write: 5 chunks or more.
      assert.ok(s.seen.chunks.length <= 2, `50 events in ${s.seen.chunks.length} chunks`);
      assert.ok(s.seen.chunks[0]! - t0 >= 2500, `the first came ${s.seen.chunks[0]! - t0} ms after the first change`);
    } finally {
      s.close();
    }
  });

  it('a batched stream has exactly the events of an unbatched one, and the same ids', async () => {
    const plain = await follow('/rest/1.1/jobs');
    const batched = await follow('/rest/1.1/jobs?batch=300');
    const jobs = await c.submit('+(&(executable="/bin/true")(jobname="b1"))(&(executable="/bin/false")(jobname="b2"))');
    for (const j of jobs) {
      await plain.waitFor(isEnd(j.id), 'the job to end, unbatched');
      await batched.waitFor(isEnd(j.id), 'the job to end, batched', 10_000);
    }
    const ids = (s: SseStream) => s.events.filter((e) => e.event === 'state').map((e) => e.id);
    assert.deepEqual(ids(batched), ids(plain));
    plain.close();
    batched.close();
  });

  it('events gathered when the service stops go out with its end; the resume after the restart misses none', async () => {
    const s = await follow('/rest/1.1/jobs?state=ACCEPTING&batch=60000');
    await c.submit(waiting(20, 'stopping'));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(s.events.length, 0, 'still gathered');
    // The client's agent waits for its open requests: the service ends the stream first.
    await stopCeres(ceres);
    await until(() => s.ended(), 'the stream to end');
    await c.close();
    const state = s.events.filter((e) => e.event === 'state');
    assert.equal(state.length, 20, 'the gathered events came before the end');
    assert.equal(s.events.at(-1)!.event, 'end');
    const mid = state[9]!.id!;
    ceres = await startCeres({ stateDir, config: CONFIG });
    c = Client.forUser(ceres);
    const r = await follow('/rest/1.1/jobs?state=ACCEPTING&batch=200', { 'last-event-id': mid });
    await r.waitFor((e) => e.id === state[19]!.id, 'the last of them again', 10_000);
    assert.deepEqual(
      r.events.filter((e) => e.event === 'state').map((e) => e.id),
      state.slice(10).map((e) => e.id),
      'exactly the events after the resume point, each once',
    );
    r.close();
  });

  // The service reads a gathering stream's changes once per period (src/jobs/event-feed.ts,
  // delayMs): a period's changes may be more than the stream's backlog bound. They go out
  // in parts at the reader's pace, read from the store as a replay is, never as a slow end.
  it("a period's changes past the backlog bound go out in parts; the stream is never ended as slow", async () => {
    const s = await counted('/rest/1.1/jobs?state=ACCEPTING&batch=20000');
    try {
      for (let i = 0; i < 16; i++) await c.submit(waiting(50, `full-${i}`));
      await until(() => s.seen.events >= 800 || s.seen.text.includes('event: end'), 'all 800 events', 90_000);
      assert.ok(
        !s.seen.text.includes('event: end'),
        `not ended: ${s.seen.text.slice(s.seen.text.indexOf('event: end'), s.seen.text.indexOf('event: end') + 80)}, after ${s.seen.events} events`,
      );
      assert.equal(s.seen.events, 800);
      assert.ok(s.seen.text.length > BUFFER, 'more than the bound');
      assert.ok(s.seen.chunks.length >= 2, `in parts (${s.seen.chunks.length})`);
    } finally {
      s.close();
    }
  });

  it('bad batch values get a 400 naming the bound; 0 and a bound value are taken', async () => {
    for (const bad of ['abc', '-1', '60001', '1e3', '0x10', '1.5', '', '9999999']) {
      const s = await follow(`/rest/1.1/jobs?batch=${encodeURIComponent(bad)}`);
      assert.equal(s.status, 400, `batch=${bad}`);
      assert.match(s.text, /from 0 to 60000/);
    }
    for (const good of ['0', '60000']) {
      const s = await follow(`/rest/1.1/jobs?batch=${good}`);
      assert.equal(s.status, 200, `batch=${good}`);
      s.close();
    }
  });
});
