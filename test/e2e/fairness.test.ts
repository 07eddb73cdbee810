// Per-identity fairness at the transport, against the real `ceres serve` with small
// caps: one identity that opens more connections, or has more requests in progress,
// than allowed is answered 503/429 with Retry-After, while a second identity is
// served normally; freed capacity is usable again.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { addDevUser } from '../../src/pki/dev-pki.js';

const MAX_CONNECTIONS = 3;
const MAX_REQUESTS = 2;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw TLS connection with a user's proxy; one HTTP/1.1 exchange at a time. */
class Conn {
  private buf = '';
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(readonly socket: TLSSocket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buf += d;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  /** `credential` undefined: a connection without a client certificate. */
  static open(ceres: RunningCeres, credential: string | undefined): Promise<Conn> {
    const pem = credential === undefined ? undefined : readFileSync(join(ceres.pkiDir, credential));
    return new Promise((resolve, reject) => {
      const s = connect(
        {
          host: '127.0.0.1',
          port: ceres.port,
          servername: 'localhost',
          ...(pem === undefined ? {} : { cert: pem, key: pem }),
          ca: readFileSync(join(ceres.pkiDir, 'ca.pem')),
        },
        () => resolve(new Conn(s)),
      );
      s.once('error', reject);
    });
  }
  send(text: string): void {
    this.socket.write(text);
  }
  /** The next complete response (headers and a Content-Length body). */
  async answer(timeoutMs = 30_000): Promise<Answer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.buf.slice(0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const len = Number(headers['content-length'] ?? 0);
        if (this.buf.length >= end + 4 + len) {
          const body = this.buf.slice(end + 4, end + 4 + len);
          this.buf = this.buf.slice(end + 4 + len);
          return { status: Number(statusLine?.split(' ')[1]), headers, body };
        }
      }
      if (this.closed) throw new Error(`connection closed; got: ${this.buf}`);
      if (Date.now() > deadline) throw new Error('no answer');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100).unref();
      });
    }
  }
  async get(path: string): Promise<Answer> {
    this.send(`GET /arex${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n`);
    return this.answer();
  }
  /** A submission whose body never completes: a request that stays in progress. */
  startSlowSubmission(): void {
    this.send(
      `POST /arex/rest/1.1/jobs?action=new HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n&(executable=`,
    );
  }
  close(): void {
    this.socket.destroy();
  }
}

describe('per-identity fairness (ceres serve)', () => {
  let ceres: RunningCeres;
  const open: Conn[] = [];
  const conn = async (credential: string | undefined): Promise<Conn> => {
    const c = await Conn.open(ceres, credential);
    open.push(c);
    return c;
  };
  before(async () => {
    ceres = await startCeres({
      config: {
        log: { level: 'warn' },
        http: { maxConnectionsPerIdentity: MAX_CONNECTIONS, maxRequestsPerIdentity: MAX_REQUESTS },
      },
    });
    await addDevUser(ceres.pkiDir, 'bob');
  });
  after(async () => {
    for (const c of open) c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('connections over the cap get 503 with Retry-After and are closed; another identity is served', async () => {
    const alice = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) alice.push(await conn('userproxy.pem'));
    const extra = await conn('userproxy.pem');
    const refused = await extra.get('/rest/1.1/jobs');
    assert.equal(refused.status, 503);
    assert.equal(JSON.parse(refused.body).code, 'CE_ERR_HTTP_TOO_MANY_CONNECTIONS');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(refused.headers.connection, 'close');
    assert.match(ceres.output(), /connection over the per-identity limit/);
    for (const a of alice) assert.equal((await a.get('/rest/1.1/jobs')).status, 200);
    const bob = await conn('bob-proxy.pem');
    assert.equal((await bob.get('/rest/1.1/jobs')).status, 200);
    // A connection over the cap that sends nothing is closed all the same.
    const silent = await conn('userproxy.pem');
    const t0 = Date.now();
    while (!silent.closed && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 100));
    assert.ok(silent.closed, 'the silent over-cap connection was not closed');
    // Closing one frees its place.
    alice.pop()?.close();
    let again: Answer | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      const c = await conn('userproxy.pem');
      again = await c.get('/rest/1.1/jobs').catch(() => undefined);
      if (again?.status !== 200) await new Promise((r) => setTimeout(r, 100));
      else alice.push(c);
    }
    assert.equal(again?.status, 200);
    for (const c of [...alice, bob]) c.close();
  });

  it('connections without a certificate count under their address, apart from certificate holders', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const anonymous = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) anonymous.push(await conn(undefined));
    // Public resources answer on them; the next one is over the cap.
    for (const a of anonymous) assert.equal((await a.get('/rest')).status, 200);
    const extra = await conn(undefined);
    assert.equal((await extra.get('/rest')).status, 503);
    const alice = await conn('userproxy.pem');
    assert.equal((await alice.get('/rest/1.1/jobs')).status, 200);
    for (const c of [...anonymous, alice]) c.close();
  });

  it('requests in progress over the cap get 429 with Retry-After; another identity is served', async () => {
    // Let the server see the closed connections of the previous test go.
    await new Promise((r) => setTimeout(r, 300));
    const slow = [await conn('userproxy.pem'), await conn('userproxy.pem')];
    for (const s of slow) s.startSlowSubmission();
    const third = await conn('userproxy.pem');
    let refused: Answer | undefined;
    for (let i = 0; i < 50 && refused?.status !== 429; i++) {
      refused = await third.get('/rest/1.1/jobs');
      if (refused.status !== 429) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(refused?.status, 429);
    assert.equal(JSON.parse(refused?.body ?? '{}').code, 'CE_ERR_HTTP_TOO_MANY_REQUESTS');
    assert.equal(refused?.headers['retry-after'], '1');
    const bob = await conn('bob-proxy.pem');
    assert.equal((await bob.get('/rest/1.1/jobs')).status, 200);
    // One upload ends (the client gives up): its place is free again.
    slow[0]?.close();
    let after: Answer | undefined;
    for (let i = 0; i < 50 && after?.status !== 200; i++) {
      after = await third.get('/rest/1.1/jobs');
      if (after.status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(after?.status, 200);
  });
});
