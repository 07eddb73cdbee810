// The body-rate floor against the real service over TLS (floor 1000 B/s over 2 s):
// clients trickling a body (uploads, submissions, id lists) or sending none are
// answered 408 and disconnected within the window; a body still trickling after an
// early answer loses its connection; uploads at full speed and slow-but-steady ones
// are unaffected.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { credential, head, readAll, send, tlsConnect, type Credential } from '../helpers/raw-tls.js';
import { parseRaw } from '../sessions/fixture.js';
import { UPLOAD_TEMP_PREFIX } from '../../src/sessions/session-path.js';

const WINDOW_S = 2;
const FLOOR = 1000;

interface Outcome {
  /** Parsed answer, if one came before the close. */
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly connection: string | undefined;
  /** Seconds from the end of the head to the close of the connection. */
  readonly closedAfter: number;
}

describe('body-rate floor', () => {
  let ceres: RunningCeres;
  let c: Client;
  let cred: Credential;
  let job: string;
  let base: string;
  before(async () => {
    ceres = await startCeres({
      config: { log: { level: 'info' }, http: { minBodyBytesPerSecond: FLOOR, bodyRateWindowSeconds: WINDOW_S } },
    });
    c = Client.forUser(ceres);
    cred = credential(ceres.pkiDir);
    [{ id: job }] = await c.submit('&(executable="/bin/echo")(inputfiles=("never" ""))');
    base = new URL(ceres.url).pathname;
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  /** Sends `h`, then one byte of `body` every `everyMs` until the connection closes (or the body is out). */
  async function trickle(h: string, body: Buffer, everyMs: number): Promise<Outcome> {
    const s: TLSSocket = await tlsConnect(ceres.port, cred);
    const all = readAll(s);
    await send(s, h);
    const t0 = Date.now();
    let closed = false;
    void all.then(() => (closed = true));
    // Well past the window the verdict is in: give up trickling then.
    const giveUpAt = t0 + (WINDOW_S * 1.25 + 8) * 1000;
    for (let i = 0; i < body.length && !closed && Date.now() < giveUpAt; i++) {
      await sleep(everyMs);
      if (!closed) await send(s, body.subarray(i, i + 1));
    }
    const got = await Promise.race([all, sleep(Math.max(0, giveUpAt - Date.now())).then(() => undefined)]);
    const closedAfter = (Date.now() - t0) / 1000;
    s.destroy();
    if (got === undefined)
      return { status: undefined, code: undefined, connection: undefined, closedAfter: Number.POSITIVE_INFINITY };
    if (got.length === 0) return { status: undefined, code: undefined, connection: undefined, closedAfter };
    const r = parseRaw(got);
    return {
      status: r.status,
      code: /CE_ERR_[A-Z_]+/.exec(r.body.toString())?.[0],
      connection: r.headers.connection,
      closedAfter,
    };
  }

  const cutInTime = (o: Outcome, what: string): void => {
    // Cut after one to 1.25 windows; the slack is for a loaded machine's timers.
    assert.ok(
      o.closedAfter >= WINDOW_S * 0.9 && o.closedAfter <= WINDOW_S * 1.25 + 3,
      `${what}: connection closed after ${o.closedAfter} s`,
    );
  };

  const answered408 = (o: Outcome, what: string): void => {
    assert.equal(o.status, 408, `${what}: ${JSON.stringify(o)}`);
    assert.equal(o.code, 'CE_ERR_HTTP_BODY_TOO_SLOW');
    assert.equal(o.connection, 'close');
    cutInTime(o, what);
  };

  it('a trickled upload (plain and ranged) is answered 408 within the window, and leaves no temporary file', async () => {
    const [plain, ranged] = await Promise.all([
      trickle(
        head('PUT', `${base}/rest/1.1/jobs/${job}/session/slow.bin`, { 'content-length': 1000 }),
        Buffer.alloc(1000, 1),
        500,
      ),
      trickle(
        head('PUT', `${base}/rest/1.1/jobs/${job}/session/slow-r.bin`, {
          'content-length': 1000,
          'content-range': 'bytes 0-999/1000',
        }),
        Buffer.alloc(1000, 1),
        500,
      ),
    ]);
    answered408(plain, 'plain PUT');
    answered408(ranged, 'ranged PUT');
    const dir = join(ceres.stateDir, 'sessions', job);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.startsWith(UPLOAD_TEMP_PREFIX)),
      [],
    );
    assert.ok(!readdirSync(dir).includes('slow.bin'));
  });

  it('a trickled submission and a trickled id list are answered 408 within the window', async () => {
    const desc = Buffer.from('&(executable="/bin/true")');
    const ids = Buffer.from(JSON.stringify({ job: [{ id: job }] }));
    const [submit, list] = await Promise.all([
      trickle(head('POST', `${base}/rest/1.1/jobs?action=new`, { 'content-length': desc.length }), desc, 400),
      trickle(
        head('POST', `${base}/rest/1.1/jobs?action=status`, {
          'content-length': ids.length,
          'content-type': 'application/json',
        }),
        ids,
        400,
      ),
    ]);
    answered408(submit, 'submission');
    answered408(list, 'id list');
  });

  it('a client that declares a body and sends none is answered 408 within the window', async () => {
    answered408(
      await trickle(
        head('PUT', `${base}/rest/1.1/jobs/${job}/session/never.bin`, { 'content-length': 100 }),
        Buffer.alloc(0),
        0,
      ),
      'silent body',
    );
  });

  it('a body still trickling after an early answer loses its connection within the window', async () => {
    const o = await trickle(
      head('PUT', `${base}/rest/1.1/jobs/nosuchjob0000000000000000/session/x`, { 'content-length': 1000 }),
      Buffer.alloc(1000, 1),
      500,
    );
    assert.equal(o.status, 404);
    cutInTime(o, 'after a 404');
  });

  it('uploads at full speed and slow-but-steady ones are unaffected', async () => {
    const data = randomBytes(16 * 1024 * 1024);
    const fast = await c.req('PUT', `/rest/1.1/jobs/${job}/session/fast.bin`, data);
    assert.equal(fast.status, 200);
    // 2.5 windows at about four times the floor, in small pieces.
    const s = await tlsConnect(ceres.port, cred);
    const all = readAll(s);
    const total = Math.round(FLOOR * 4 * WINDOW_S * 2.5);
    await send(
      s,
      head('PUT', `${base}/rest/1.1/jobs/${job}/session/steady.bin`, { 'content-length': total, connection: 'close' }),
    );
    for (let sent = 0; sent < total; sent += 400) {
      await send(s, Buffer.alloc(Math.min(400, total - sent), 2));
      await sleep(100);
    }
    const r = parseRaw(await all);
    assert.equal(r.status, 200);
    const back = await c.req('GET', `/rest/1.1/jobs/${job}/session/steady.bin`);
    assert.equal(back.text.length, total);
  });

  it('the cuts are logged as refusals (408) or info, never as errors', () => {
    const lines = ceres.output().split('\n');
    assert.deepEqual(
      lines.filter((l) => /"level":(50|60)|"status":5\d\d/.test(l)),
      [],
    );
    assert.ok(lines.some((l) => l.includes('request body too slow')));
    assert.ok(lines.some((l) => /"status":408/.test(l)));
  });
});
