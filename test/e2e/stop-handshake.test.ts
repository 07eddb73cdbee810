/**
 * A stop does not wait for connections that never began a request: a client that opened a
 * TCP connection and never finished its TLS handshake is cut when the close begins
 * (src/http/graceful-close.ts). Before, the close waited for the handshake timeout, and a
 * stop whose wait passed `shutdownTimeoutSeconds` ended with exit code 1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

describe('stop with connections still in their TLS handshake (real service)', () => {
  const stateDir = tempDir('stop-handshake');
  let ceres: RunningCeres;
  const sockets: Socket[] = [];
  before(async () => {
    // Long enough that waiting for it could not pass for a quick stop.
    ceres = await startCeres({
      stateDir,
      config: { tls: { handshakeTimeoutSeconds: 120 }, shutdownTimeoutSeconds: 100 },
    });
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    if (ceres.child.exitCode === null && ceres.child.signalCode === null) await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('connections that never said hello, are half through it, or made no request after it do not hold the stop', async () => {
    const url = new URL(ceres.url);
    const c = Client.forUser(ceres);
    // A request answered on a kept-alive connection: the close ends that one as idle.
    assert.equal((await c.req('GET', '/rest')).status, 200);
    const silent = connect(Number(url.port), url.hostname);
    const partial = connect(Number(url.port), url.hostname);
    for (const s of [silent, partial]) {
      s.on('error', () => undefined);
      sockets.push(s);
      await new Promise((r) => s.once('connect', r));
    }
    // The first bytes of a TLS record header: the server waits for the rest.
    partial.write(Buffer.from([0x16, 0x03, 0x01]));
    // A whole handshake and no request: an HTTP client connecting ahead (undici does after
    // an aborted request, so a stop after a client dropped its event stream waited 30 s).
    const pem = readFileSync(join(ceres.pkiDir, 'userproxy.pem'));
    const ready = tlsConnect({
      port: Number(url.port),
      host: url.hostname,
      cert: pem,
      key: pem,
      ca: readFileSync(join(ceres.pkiDir, 'ca.pem')),
      servername: 'localhost',
    });
    ready.on('error', () => undefined);
    sockets.push(ready);
    await new Promise((r) => ready.once('secureConnect', r));
    const closed = Promise.all(sockets.map((s) => new Promise((r) => s.once('close', r))));
    const t0 = Date.now();
    const code = await stopCeres(ceres);
    const took = Date.now() - t0;
    await closed;
    await c.close();
    assert.equal(code, 0, 'a graceful stop, not a forced one');
    assert.ok(took < 20_000, `the stop took ${took} ms (the handshake timeout is 120 s)`);
  });
});
