// The access log line of every request names the caller's DN and the remote address
// (as docs/operations.md and docs/security.md say), checked on the real service's output;
// and the lines are written in batches, warnings at once, nothing lost at a graceful stop.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

function logLines(ceres: RunningCeres): Record<string, unknown>[] {
  return ceres
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('request log lines', () => {
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres({ config: { log: { level: 'info' } } });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  const lines = (): Record<string, unknown>[] => logLines(ceres).filter((o) => o.msg === 'request');

  it('an authenticated request logs the DN and the remote address', async () => {
    assert.equal((await c.req('GET', '/rest/1.1/jobs')).status, 200);
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = lines().find((l) => l.url === '/arex/rest/1.1/jobs');
      if (!line) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(line, 'a request line');
    assert.match(String(line.dn), /CN=/);
    assert.equal(line.remote, '127.0.0.1');
  });

  it('a refused request (unknown path) still logs who and from where', async () => {
    assert.equal((await c.req('GET', '/rest/1.1/nosuch')).status, 404);
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = lines().find((l) => l.url === '/arex/rest/1.1/nosuch');
      if (!line) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(line);
    assert.equal(line.status, 404);
    assert.match(String(line.dn), /CN=/);
    assert.equal(line.remote, '127.0.0.1');
  });
});

describe('log lines written in batches', () => {
  // A long interval, so that a line seen early was written by something else than the timer.
  const FLUSH_MS = 3000;
  let ceres: RunningCeres;
  let c: Client;
  let clientClosed = false;
  const sockets: TLSSocket[] = [];
  before(async () => {
    ceres = await startCeres({
      config: {
        log: { level: 'info', bufferBytes: 8192, flushMilliseconds: FLUSH_MS },
        http: { maxConnectionsPerIdentity: 1 },
      },
    });
    c = Client.forUser(ceres);
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    if (!clientClosed) await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  const requestLine = (url: string): Record<string, unknown> | undefined =>
    logLines(ceres).find((l) => l.msg === 'request' && l.url === url);

  async function until(f: () => boolean, what: string, ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (!f()) {
      if (Date.now() > end) assert.fail(`timed out after ${ms} ms: ${what}`);
      await sleep(20);
    }
  }

  it('an access line waits for its batch, and is written within the interval', async () => {
    // The start-up's lines come in more than one batch, the last begun by lines logged after
    // the service URL is printed (the batch backend, the cache, the upload sweep): a request
    // made then joins that batch and is written less than an interval after it (seen on a
    // loaded machine, where those lines come late). So wait until no line has come for longer
    // than an interval: then no batch is pending, and the request begins the next one.
    let seen = -1;
    let since = Date.now();
    const quiet = (): boolean => {
      const n = logLines(ceres).length;
      if (n !== seen) [seen, since] = [n, Date.now()];
      return n > 0 && Date.now() - since > FLUSH_MS + 500;
    };
    await until(quiet, 'the start-up batches', 4 * FLUSH_MS + 30_000);
    const url = '/arex/rest/1.1/jobs?batch=1';
    const t0 = Date.now();
    assert.equal((await c.req('GET', '/rest/1.1/jobs?batch=1')).status, 200);
    await sleep(500);
    assert.equal(requestLine(url), undefined, 'not written one line at a time');
    await until(() => requestLine(url) !== undefined, 'the line after the interval', FLUSH_MS + 10_000);
    assert.ok(Date.now() - t0 >= FLUSH_MS - 100, `written by the interval (${Date.now() - t0} ms)`);
  });

  it('a warning is written at once, with the lines gathered before it', async () => {
    const url = '/arex/rest/1.1/jobs?batch=2';
    assert.equal((await c.req('GET', '/rest/1.1/jobs?batch=2')).status, 200);
    // A second connection of the same user is over the limit of one: a warning line.
    const pem = readFileSync(join(ceres.pkiDir, 'userproxy.pem'));
    const ca = readFileSync(join(ceres.pkiDir, 'ca.pem'));
    const t0 = Date.now();
    await new Promise<void>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port: ceres.port, servername: 'localhost', cert: pem, key: pem, ca }, () =>
        resolve(),
      );
      s.on('error', () => undefined);
      s.once('error', reject);
      sockets.push(s);
    });
    const warned = (): boolean => logLines(ceres).some((l) => /over the per-identity limit/.test(String(l.msg)));
    await until(warned, 'the warning', FLUSH_MS - 1000);
    assert.ok(Date.now() - t0 < FLUSH_MS, 'before the interval');
    const all = logLines(ceres);
    const req = all.findIndex((l) => l.msg === 'request' && l.url === url);
    const warn = all.findIndex((l) => /over the per-identity limit/.test(String(l.msg)));
    assert.ok(req >= 0 && req < warn, `the request line (${req}) before the warning (${warn})`);
  });

  it('a graceful stop writes every line gathered', async () => {
    const url = '/arex/rest/1.1/jobs?batch=3';
    assert.equal((await c.req('GET', '/rest/1.1/jobs?batch=3')).status, 200);
    await sleep(100);
    assert.equal(requestLine(url), undefined, 'still gathered');
    await c.close();
    clientClosed = true;
    for (const s of sockets) s.destroy();
    assert.equal(await stopCeres(ceres), 0);
    assert.ok(requestLine(url), 'written at exit');
    assert.ok(logLines(ceres).some((l) => l.msg === 'stopped'));
  });
});
