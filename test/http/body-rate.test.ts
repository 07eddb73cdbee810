// The body-rate floor on a plain HTTP/1.1 socket with a 1 s window (the TLS service
// is covered by test/e2e/body-rate): the server's own slowness never counts against
// the client, a floor of 0 is off, and the 408 carries its reason.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { testApp } from '../helpers/app.js';
import { readBody } from '../../src/http/body.js';
import { bodyRateHook } from '../../src/http/body-rate.js';
import { rawRequest } from '../sessions/fixture.js';
import type { Resource } from '../../src/api/rest/resource.js';

const MiB = 1024 * 1024;
const A = { 'x-test-dn': '/DC=org/DC=test/CN=Alice' };

/** PUT that waits `delayMs` before it starts reading the body, then answers its length. */
const lateReader: Resource = {
  methods: {
    PUT: async (req) => {
      await sleep(Number(req.query.get('delay') ?? 0));
      const body = await readBody(req.raw, 64 * MiB);
      return req.reply.code(200).send(String(body.length));
    },
  },
};

async function serve(minBytesPerSecond: number) {
  const app = testApp({ session: lateReader });
  app.addHook('onRequest', bodyRateHook({ minBytesPerSecond, windowSeconds: 1 }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port };
}

function put(port: number, delayMs: number, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'PUT',
        path: `/arex/rest/1.1/jobs/x/session?delay=${delayMs}`,
        headers: { ...A, 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('body-rate floor (plain HTTP, 1 s window)', () => {
  let on: Awaited<ReturnType<typeof serve>>;
  let off: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    on = await serve(1000);
    off = await serve(0);
  });
  after(async () => {
    await on.app.close();
    await off.app.close();
  });

  it("a body the handler reads only after 3 windows is not the client's fault: it is accepted", async () => {
    // 8 MiB fill the socket buffers at once; then nothing moves until the handler reads.
    const r = await put(on.port, 3000, Buffer.alloc(8 * MiB, 1));
    assert.equal(r.status, 200);
    assert.equal(r.text, String(8 * MiB));
  });

  it('a silent body is 408 with the measured reason, and a floor of 0 leaves it alone', async () => {
    const t0 = Date.now();
    const r = await rawRequest(
      on.port,
      `PUT /arex/rest/1.1/jobs/x/session HTTP/1.1\r\nx-test-dn: ${A['x-test-dn']}\r\naccept: application/json\r\nContent-Length: 10`,
    );
    assert.equal(r.status, 408);
    assert.equal(r.headers.connection, 'close');
    const doc = JSON.parse(r.body.toString());
    assert.equal(doc.code, 'CE_ERR_HTTP_BODY_TOO_SLOW');
    assert.match(doc.reason, /0 bytes in the last 1 s, at least 1000 required/);
    assert.ok(Date.now() - t0 < 5000, `answered after ${Date.now() - t0} ms`);
    // Off: the same request is still waiting after 3 windows.
    const s = connect(off.port, '127.0.0.1');
    let answered = false;
    s.on('data', () => (answered = true));
    s.on('close', () => (answered = true));
    s.write(
      `PUT /arex/rest/1.1/jobs/x/session HTTP/1.1\r\nHost: x\r\nx-test-dn: ${A['x-test-dn']}\r\nContent-Length: 10\r\n\r\nabc`,
    );
    await sleep(3000);
    assert.equal(answered, false);
    s.destroy();
  });
});
