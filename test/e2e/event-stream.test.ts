// The job event stream (GET jobs with Accept: text/event-stream, a Ceres extension) on the
// real service over real TLS: a job followed to its end on both interface versions, resumed
// exactly after an event (header and query, and across a restart), filters, the events of one
// read in one write, heartbeats, a token's expiry ending the stream, the metrics gauge; bad
// resume points and what never changes for a client that does not ask for the stream.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { dataOf, openStream, openStreamsGauge, type SseEvent, type SseStream } from '../helpers/sse.js';
import { until } from '../helpers/poll.js';
import { request } from 'undici';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const FINAL = ['FINISHED', 'FAILED', 'KILLED'];
const CONFIG = {
  cluster: { queues: [{ name: 'main' }] },
  metrics: { listen: '127.0.0.1:0' },
  events: { heartbeatSeconds: 0.3 },
};

const isEnd = (id: string) => (e: SseEvent) =>
  e.event === 'state' && e.data.includes(id) && FINAL.includes(dataOf(e).state);

describe('job event stream (real service, real TLS)', () => {
  const stateDir = tempDir('stream');
  let ceres: RunningCeres;
  let c: Client;
  let bob: Client;
  const open: SseStream[] = [];
  const follow = async (path: string, headers: Record<string, string> = {}, client = c): Promise<SseStream> => {
    const s = await openStream(client.agent, `${ceres.url}${path}`, { ...client.headers, ...headers });
    open.push(s);
    return s;
  };
  const gauge = (): Promise<number> => openStreamsGauge(ceres.output());
  const start = async (first = false) => {
    ceres = await startCeres({ stateDir, config: CONFIG });
    if (first) await addDevUser(ceres.pkiDir, 'bob');
    c = Client.forUser(ceres);
    bob = new Client(ceres.url, join(ceres.pkiDir, 'bob-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
  };
  before(async () => {
    await start(true);
  });
  after(async () => {
    for (const s of open) s.close();
    await c.close();
    await bob.close();
    await stopCeres(ceres);
    removeDir(stateDir);
  });

  for (const version of ['1.0', '1.1']) {
    it(`${version}: a job followed from ACCEPTING to its end, each event with id, previous state, time, exit code`, async () => {
      const s = await follow(`/rest/${version}/jobs`);
      assert.equal(s.status, 200);
      assert.match(String(s.headers['content-type']), /^text\/event-stream/);
      const [j] = await c.submit('&(executable="/bin/false")(jobname="followed")', version);
      const end = await s.waitFor(isEnd(j.id), 'the job to end on the stream');
      const mine = s.events.filter((e) => e.event === 'state' && dataOf(e).id === j.id);
      assert.equal(dataOf(mine[0]!).state, 'ACCEPTING');
      assert.equal(dataOf(mine[0]!).previous_state, null);
      for (let i = 1; i < mine.length; i++) {
        assert.equal(dataOf(mine[i]!).previous_state, dataOf(mine[i - 1]!).state, 'events chain');
        assert.ok(Number(mine[i]!.id) > Number(mine[i - 1]!.id), 'ids increase');
      }
      const d = dataOf(end);
      assert.equal(d.state, 'FAILED');
      assert.equal(d.exit_code, 1);
      assert.ok(String(d.failure_reason).length > 0);
      assert.ok(!Number.isNaN(Date.parse(d.time)));
      s.close();
    });
  }

  it('heartbeat comments come on a quiet stream; the gauge counts it and returns to 0 when it leaves', async () => {
    const s = await follow('/rest/1.1/jobs');
    await until(() => s.comments.includes('heartbeat'), 'a heartbeat');
    await until(async () => (await gauge()) >= 1, 'the gauge to count the stream');
    s.close();
    await until(async () => (await gauge()) === 0, 'the gauge back to 0');
  });

  // Any bytes keep a proxy open: a stream that wrote since the last heartbeat tick gets none.
  it('a stream with events more often than the heartbeat period gets no heartbeats; quiet again, it does', async () => {
    const s = await follow('/rest/1.1/jobs?state=ACCEPTING');
    const before = s.events.length;
    const [first] = await c.submit('&(executable="/bin/echo")(inputfiles=("never" ""))(jobname="busy-0")');
    await s.waitFor((e) => e.data.includes(first.id), 'the first event');
    const quietComments = s.comments.length;
    // An event every 100 ms for 1.5 s: five heartbeat periods (0.3 s) without a quiet one.
    const t0 = Date.now();
    for (let i = 1; Date.now() - t0 < 1500; i++) {
      await c.submit(`&(executable="/bin/echo")(inputfiles=("never" ""))(jobname="busy-${i}")`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const busyComments = s.comments.length - quietComments;
    assert.ok(s.events.length - before >= 10, 'events kept coming');
    assert.equal(busyComments, 0, 'no heartbeat while events came');
    const n = s.comments.length;
    await until(() => s.comments.length > n && s.comments.at(-1) === 'heartbeat', 'a heartbeat once quiet');
    s.close();
  });

  it('Last-Event-ID (header or query) resumes exactly after that event, also across a restart', async () => {
    const s = await follow('/rest/1.1/jobs');
    const [j] = await c.submit('&(executable="/bin/true")(jobname="resumed")');
    await s.waitFor(isEnd(j.id), 'the job to end');
    s.close();
    const mine = s.events.filter((e) => e.event === 'state' && dataOf(e).id === j.id);
    assert.ok(mine.length >= 3);
    const after = mine[1]!.id!;
    const expected = mine.slice(2).map((e) => e.id);
    const check = async (r: SseStream) => {
      await r.waitFor(isEnd(j.id), 'the replay to reach the end');
      assert.deepEqual(
        r.events.filter((e) => e.event === 'state').map((e) => e.id),
        expected,
        'exactly the events after the resume point, each once',
      );
      r.close();
    };
    await check(await follow('/rest/1.1/jobs', { 'last-event-id': after }));
    await check(await follow(`/rest/1.1/jobs?last_event_id=${after}`));
    await c.close();
    await bob.close();
    await stopCeres(ceres);
    await start();
    await check(await follow('/rest/1.1/jobs', { 'last-event-id': after }));
  });

  it("filters: state= and id=; another user's job id never matches, and their events never come", async () => {
    const [theirs] = await bob.submit('&(executable="/bin/true")(jobname="bobs")');
    const [mine] = await c.submit('&(executable="/bin/true")(jobname="mine")');
    const byState = await follow('/rest/1.1/jobs?state=FINISHED,FAILED&last_event_id=0');
    const byId = await follow(`/rest/1.1/jobs?id=${theirs.id},${mine.id}&last_event_id=0`);
    const all = await follow('/rest/1.1/jobs?last_event_id=0');
    await byId.waitFor(isEnd(mine.id), 'my job to end');
    await all.waitFor(isEnd(mine.id), 'my job to end');
    await byState.waitFor(isEnd(mine.id), 'my job to end');
    await bob.waitFor([theirs.id], FINAL);
    assert.ok(byState.events.every((e) => ['FINISHED', 'FAILED'].includes(dataOf(e).state)));
    assert.ok(
      byId.events.every((e) => dataOf(e).id === mine.id),
      'only my named job',
    );
    assert.ok(byId.events.length >= 3);
    for (const s of [byState, byId, all])
      assert.ok(!s.events.some((e) => e.data.includes(theirs.id)), "bob's job never shows");
    for (const s of [byState, byId, all]) s.close();
  });

  it('the events of one read go out together: 200 submissions in one request arrive in a few chunks, not 200', async () => {
    // Each chunk the stream writes is a write through HTTP, TLS and a system call: one
    // per event made 10M deliveries a minute impossible (docs/performance.md). The jobs
    // wait for an input that never comes, so only their submission changes state.
    const ac = new AbortController();
    const r = await request(`${ceres.url}/rest/1.1/jobs?state=ACCEPTING`, {
      dispatcher: c.agent,
      headers: { accept: 'text/event-stream' },
      signal: ac.signal,
    });
    assert.equal(r.statusCode, 200);
    let chunks = 0;
    let events = 0;
    let text = '';
    r.body.setEncoding('utf8');
    r.body.on('data', (chunk: string) => {
      text += chunk;
      const before = events;
      events = text.split('event: state\n').length - 1;
      if (events > before) chunks++;
    });
    r.body.on('error', () => {});
    try {
      const one = '(executable="/bin/echo")(inputfiles=("never" ""))';
      await c.submit(`+${Array.from({ length: 200 }, (_, i) => `(&${one}(jobname="burst-${i}"))`).join('')}`);
      await until(() => events >= 200, 'the 200 submissions on the stream');
      assert.ok(chunks <= 20, `200 events came in ${chunks} chunks`);
    } finally {
      ac.abort();
    }
  });

  it('bad resume points and filters get a clear 400, never a 5xx; a resume point past the newest gets relist', async () => {
    for (const bad of ['abc', '-1', '9223372036854775808', '1e3', '0x10', '99999999999999999']) {
      for (const how of ['header', 'query'] as const) {
        const s =
          how === 'header'
            ? await follow('/rest/1.1/jobs', { 'last-event-id': bad })
            : await follow(`/rest/1.1/jobs?last_event_id=${encodeURIComponent(bad)}`);
        assert.equal(s.status, 400, `${how} ${bad}`);
        assert.match(s.text, /not an event id/);
      }
    }
    const badState = await follow('/rest/1.1/jobs?state=NOPE');
    assert.equal(badState.status, 400);
    assert.match(badState.text, /unknown job state &#39;NOPE&#39;/);
    const future = await follow('/rest/1.1/jobs', { 'last-event-id': String(2 ** 52) });
    assert.equal(future.status, 200);
    const relist = await future.waitFor((e) => e.event === 'relist', 'a relist event');
    assert.ok(Number(relist.id) < 2 ** 52, 'it names the newest event to follow from');
    future.close();
  });

  it('a token stream ends with credential-expired when the token expires', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      MAIN,
      'token',
      'issue',
      '--dir',
      ceres.pkiDir,
      '--sub',
      'stream-user',
      '--scope',
      'compute.read',
      '--lifetime',
      '4',
    ]);
    const tc = Client.withToken(ceres, stdout.trim());
    try {
      const s = await follow('/rest/1.1/jobs', {}, tc);
      assert.equal(s.status, 200, s.text);
      const end = await s.waitFor((e) => e.event === 'end', 'the stream to end', 30_000);
      assert.equal(dataOf(end).reason, 'credential-expired');
      await until(() => s.ended(), 'the stream to close');
    } finally {
      await tc.close();
    }
  });

  it('without Accept: text/event-stream every answer is as before (JSON list, HTML, XML, HEAD)', async () => {
    const [j] = await c.submit('&(executable="/bin/true")(jobname="plain")');
    const json = await c.req('GET', '/rest/1.1/jobs');
    assert.equal(json.status, 200);
    assert.match(String(json.headers['content-type']), /^application\/json/);
    assert.ok((json.json().job as { id: string }[]).some((x) => x.id === j.id));
    const html = await c.req('GET', '/rest/1.1/jobs', undefined, { accept: 'text/html' });
    assert.match(String(html.headers['content-type']), /^text\/html/);
    assert.ok(html.text.includes(j.id));
    const none = await c.req('GET', '/rest/1.1/jobs', undefined, { accept: '*/*' });
    assert.match(String(none.headers['content-type']), /^text\/html/);
    // A listed format before the stream type wins, as A-REX's first-known-type rule says.
    const first = await c.req('GET', '/rest/1.1/jobs', undefined, { accept: 'application/json, text/event-stream' });
    assert.match(String(first.headers['content-type']), /^application\/json/);
    const head = await c.req('HEAD', '/rest/1.1/jobs', undefined, { accept: 'text/event-stream' });
    assert.notEqual(head.status, 500);
    assert.doesNotMatch(String(head.headers['content-type']), /event-stream/);
  });

  it('action=status and info with since=N and an empty id list: the jobs changed after N, and where to go on', async () => {
    const post = (action: string, since: string, body = '', version = '1.1') =>
      c.req('POST', `/rest/${version}/jobs?action=${action}&since=${encodeURIComponent(since)}`, body, {
        'content-type': 'application/json',
      });
    const [first] = await c.submit('&(executable="/bin/true")(jobname="before-since")');
    await c.waitFor([first.id], FINAL);
    const all = await post('status', '0');
    assert.equal(all.status, 201, all.text);
    const seq = Number(all.headers['ceres-sequence']);
    assert.ok(seq > 0, 'the sequence to continue from');
    const ids = (all.json().job as { id: string; state: string }[]).map((j) => j.id);
    assert.equal(new Set(ids).size, ids.length, 'each job once');
    assert.ok(ids.includes(first.id));
    const [j] = await c.submit('&(executable="/bin/true")(jobname="since")');
    await c.waitFor([j.id], FINAL);
    // Jobs of the file's earlier tests may still change meanwhile: only this test's two count.
    const ours = (x: { id: string }): boolean => x.id === first.id || x.id === j.id;
    const next = await post('status', String(seq), '{"job":[]}');
    assert.deepEqual(
      (next.json().job as { id: string; state: string }[]).filter(ours).map((x) => [x.id, x.state]),
      [[j.id, 'FINISHED']],
      'only the job that changed since, in its current state',
    );
    const info = await post('info', String(seq), '', '1.0');
    assert.equal(info.status, 201);
    assert.deepEqual(
      (info.json().job as { id: string }[]).filter(ours).map((x) => x.id),
      [j.id],
    );
    const quiet = await post('status', String(Number(next.headers['ceres-sequence'])));
    assert.deepEqual(((quiet.json().job ?? []) as { id: string }[]).filter(ours), [], 'nothing changed since');
    // Failure paths: never a 5xx.
    for (const bad of ['abc', '-1', '9223372036854775808', ''])
      assert.equal((await post('status', bad)).status, 400, `since=${bad}`);
    const withIds = await post('status', '0', JSON.stringify({ job: [{ id: j.id }] }));
    assert.equal(withIds.status, 400);
    assert.match(withIds.text, /empty id list/);
    const future = await post('status', String(2 ** 50));
    assert.equal(future.status, 410);
    // Without since= the answer is as before: an empty list answers an empty list.
    const plain = await c.req('POST', '/rest/1.1/jobs?action=status', '{"job":[]}', {
      'content-type': 'application/json',
    });
    assert.equal(plain.status, 201);
    assert.equal(plain.headers['ceres-sequence'], undefined);
  });
});
