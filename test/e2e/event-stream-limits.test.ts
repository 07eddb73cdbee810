// The job event stream under abuse, on the real service over real TLS: a reader that never
// reads is ended (slow-reader) while others are served; one identity's streams are capped
// and are not requests in progress; a resume point older than retention gets relist;
// clients that leave mid-event; and the open-streams gauge back at 0 after all of it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { dataOf, openStream, openStreamsGauge, type SseStream } from '../helpers/sse.js';
import { until } from '../helpers/poll.js';

const MAX_STREAMS = 3;
const CONFIG = {
  cluster: { queues: [{ name: 'main' }] },
  metrics: { listen: '127.0.0.1:0' },
  http: { maxRequestsPerIdentity: 2 },
  events: { maxStreamsPerIdentity: MAX_STREAMS, streamBufferBytes: 64 * 1024, heartbeatSeconds: 0.5 },
};

describe('job event stream limits (real service, real TLS)', () => {
  const stateDir = tempDir('stream-limits');
  let ceres: RunningCeres;
  let c: Client;
  let owner: string;
  const open: SseStream[] = [];
  const follow = async (path: string, headers: Record<string, string> = {}): Promise<SseStream> => {
    const s = await openStream(c.agent, `${ceres.url}${path}`, headers);
    open.push(s);
    return s;
  };
  const gauge = (): Promise<number> => openStreamsGauge(ceres.output());
  /** A raw TLS connection as the user, which sends a stream request and then reads only when told. */
  const rawStream = (path: string): Promise<TLSSocket> =>
    new Promise((resolve, reject) => {
      const pem = readFileSync(join(ceres.pkiDir, 'userproxy.pem'));
      const s = connect({
        host: '127.0.0.1',
        port: ceres.port,
        cert: pem,
        key: pem,
        ca: readFileSync(join(ceres.pkiDir, 'ca.pem')),
        servername: 'localhost',
      });
      s.once('secureConnect', () => {
        s.write(
          `GET ${new URL(ceres.url).pathname}${path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n`,
        );
        resolve(s);
      });
      s.once('error', reject);
    });

  before(async () => {
    ceres = await startCeres({ stateDir, config: CONFIG });
    c = Client.forUser(ceres);
    const [j] = await c.submit('&(executable="/bin/true")(jobname="owner")');
    await c.waitFor([j.id], ['FINISHED']);
    const db = new Database(join(stateDir, 'ceres.db'), { readonly: true });
    owner = db.prepare('SELECT owner FROM jobs WHERE id = ?').pluck().get(j.id) as string;
    db.close();
  });
  after(async () => {
    for (const s of open) s.close();
    await c.close();
    await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('a reader that never reads is ended with slow-reader, and the service answers others meanwhile', async () => {
    // 5,000 events of 2 KB for this owner, written as the triggers would (a backlog far past
    // the socket buffers and the 64 KiB bound), then replayed to a reader that never reads.
    const db = new Database(join(stateDir, 'ceres.db'));
    db.pragma('busy_timeout = 10000');
    const ins = db.prepare(
      "INSERT INTO job_events (job_id, owner, state, previous_state, at, exit_code, failure_reason) VALUES (?, ?, 'FAILED', 'FINISHING', ?, 1, ?)",
    );
    const reason = 'x'.repeat(2000);
    db.transaction(() => {
      for (let i = 0; i < 5000; i++) ins.run(`bulk-${i}`, owner, Date.now(), reason);
    })();
    db.close();
    const sock = await rawStream('/rest/1.1/jobs?last_event_id=0');
    sock.pause();
    await until(async () => (await gauge()) === 0, 'the slow reader to be ended', 60_000);
    const st = await c.req('GET', '/rest/1.1/jobs');
    assert.equal(st.status, 200, 'others are served meanwhile');
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    sock.resume();
    await until(() => text.includes('"reason":"slow-reader"'), 'the end event, last', 60_000);
    assert.ok(text.length < 20 * 1024 * 1024, 'far less than the backlog was written');
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    assert.ok(ids.length > 0 && ids.length < 5000, `${ids.length} events before the end`);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, 'in order');
    sock.destroy();
    // It resumes from its last id and gets the rest.
    const resumed = await follow(`/rest/1.1/jobs?last_event_id=${ids.at(-1)}`);
    await resumed.waitFor((e) => e.event === 'state' && dataOf(e).id === 'bulk-4999', 'the rest after resuming');
    assert.equal(Number(resumed.events[0]!.id), ids.at(-1)! + 1, 'exactly after the last id');
    resumed.close();
  });

  it(`one identity holds at most ${MAX_STREAMS} streams (429 past it); streams are not requests in progress`, async () => {
    const streams = [];
    for (let i = 0; i < MAX_STREAMS; i++) streams.push(await follow('/rest/1.1/jobs'));
    assert.ok(streams.every((s) => s.status === 200));
    const over = await follow('/rest/1.1/jobs');
    assert.equal(over.status, 429);
    assert.match(over.text, /event streams open/);
    // maxRequestsPerIdentity is 2: three open streams would have taken every slot.
    const list = await c.req('GET', '/rest/1.1/jobs');
    assert.equal(list.status, 200);
    const many = await Promise.all(Array.from({ length: 30 }, () => follow('/rest/1.1/jobs')));
    assert.ok(
      many.every((s) => s.status === 429),
      '30 more at once: every one refused',
    );
    streams[0]!.close();
    await until(async () => (await gauge()) === MAX_STREAMS - 1, 'one stream gone');
    const again = await follow('/rest/1.1/jobs');
    assert.equal(again.status, 200, 'a place freed is taken again');
    for (const s of [...streams, again]) s.close();
    await until(async () => (await gauge()) === 0, 'the gauge back to 0');
  });

  it('clients that leave mid-event or right after the request never break the service; the gauge returns to 0', async () => {
    for (let i = 0; i < 10; i++) {
      const sock = await rawStream('/rest/1.1/jobs?last_event_id=0');
      await new Promise<void>((r) => sock.once('data', () => r()));
      sock.destroy(); // somewhere in the replay
      const early = await rawStream('/rest/1.1/jobs');
      early.destroy();
    }
    await until(async () => (await gauge()) === 0, 'the gauge back to 0');
    const r = await c.req('GET', '/rest/1.1/jobs?state=FINISHED');
    assert.equal(r.status, 200);
    assert.doesNotMatch(ceres.output(), /"level":(50|60)/, 'no error logged');
  });

  it('a resume point older than retention gets relist, then live events', async () => {
    const db = new Database(join(stateDir, 'ceres.db'));
    db.pragma('busy_timeout = 10000');
    db.prepare('DELETE FROM job_events WHERE seq <= 10').run();
    db.close();
    const s = await follow('/rest/1.1/jobs', { 'last-event-id': '3' });
    const relist = await s.waitFor((e) => e.event === 'relist', 'relist');
    assert.ok(Number(relist.id) > 5000, 'it names the newest event');
    const [j] = await c.submit('&(executable="/bin/true")(jobname="after-relist")');
    await s.waitFor((e) => e.event === 'state' && dataOf(e).id === j.id, 'live events after relist');
    s.close();
  });
});
