/**
 * First contact with real (fake) services over real TLS: the version choice, and one
 * clear message per way an endpoint can be unusable.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArcClient, readCredentials } from '../../bench/harness/client.js';
import { probeEndpoint } from '../../bench/harness/endpoint.js';
import { BenchError, type FailureKind } from '../../bench/harness/failures.js';
import { arcHandler, fakeHttp, fakeHttps, tlsWorld, type TlsWorld } from './tls-fixture.js';

async function probe(url: string, cert: string, key: string, ca: string) {
  const creds = await readCredentials(cert, key, ca);
  const client = new ArcClient(url, creds, { connections: 1, timeoutS: 20 });
  try {
    return await probeEndpoint(client, creds);
  } finally {
    await client.close();
  }
}

function fails(kind: FailureKind, re: RegExp) {
  return (e: unknown): boolean => {
    assert.ok(e instanceof BenchError, `not a BenchError: ${String((e as Error)?.stack ?? e)}`);
    assert.equal(e.kind, kind, e.message);
    assert.match(e.message, re);
    assert.ok(!e.message.includes('\n    at '), 'no stack trace in the message');
    return true;
  };
}

let world: TlsWorld;
const cleanups: (() => void)[] = [];
before(async () => {
  world = await tlsWorld((fn) => cleanups.push(fn));
});
after(() => {
  for (const fn of cleanups) fn();
});

test('ARC 6 style endpoint (1.0 only, single-string JSON): version 1.0, key type read', async (t) => {
  const s = await fakeHttps(world, (fn) => t.after(fn), arcHandler('{"version":"1.0"}'));
  const r = await probe(s.url, world.userCert, world.userKey, world.caFile);
  assert.equal(r.version, '1.0');
  assert.deepEqual(r.offered, ['1.0']);
  assert.deepEqual(r.serverKey, { type: 'ec', curve: 'prime256v1' });
});

test('endpoint offering 1.0 and 1.1: 1.1 is chosen', async (t) => {
  const s = await fakeHttps(world, (fn) => t.after(fn), arcHandler('{"version":["1.0","1.1"]}'));
  assert.equal((await probe(s.url, world.userCert, world.userKey, world.caFile)).version, '1.1');
});

test('a proxy file works as both cert and key, and the whole chain is sent', async (t) => {
  // Node's own verifier refuses proxy certificates, as services that accept them verify the chain themselves.
  const s = await fakeHttps(world, (fn) => t.after(fn), arcHandler('{"version":"1.0"}'), { verifyClient: false });
  await probe(s.url, world.proxyFile, world.proxyFile, world.caFile);
  const chain = s.peers[0] ?? [];
  assert.ok(chain.length >= 2, JSON.stringify(chain));
  assert.match(chain[0] ?? '', /^Test User,\d+$/); // the proxy: the user's DN plus CN=<serial>
  assert.equal(chain[1], 'Test User');
});

test('nothing listening: unreachable', async () => {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  await assert.rejects(
    probe(`https://127.0.0.1:${port}/arex`, world.userCert, world.userKey, world.caFile),
    fails('unreachable', /unreachable \(ECONNREFUSED\)/),
  );
});

test('client certificate from a CA the server does not trust: refused credentials', async (t) => {
  const s = await fakeHttps(world, (fn) => t.after(fn), arcHandler('{"version":"1.0"}'));
  await assert.rejects(
    probe(s.url, world.otherUserCert, world.otherUserKey, world.caFile),
    fails('credentials', /refused the client credentials|closed the connection/),
  );
});

test('server certificate not signed by the given CA: trust error naming --ca', async (t) => {
  const s = await fakeHttps(world, (fn) => t.after(fn), arcHandler('{"version":"1.0"}'), { host: world.otherHost });
  await assert.rejects(
    probe(s.url, world.userCert, world.userKey, world.caFile),
    fails('tls-trust', /not accepted .*--ca/),
  );
});

test('HTTP 403 on /rest: refused credentials', async (t) => {
  const s = await fakeHttps(
    world,
    (fn) => t.after(fn),
    (_q, res) => res.writeHead(403, "User can't be assigned configuration").end(),
  );
  await assert.rejects(probe(s.url, world.userCert, world.userKey, world.caFile), fails('credentials', /HTTP 403/));
});

test('versions readable by anyone, but the jobs interface answers 401: refused credentials', async (t) => {
  const s = await fakeHttps(
    world,
    (fn) => t.after(fn),
    (req, res) => {
      if (req.url === '/arex/rest')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":["1.0","1.1"]}');
      else res.writeHead(401).end();
    },
  );
  await assert.rejects(probe(s.url, world.userCert, world.userKey, world.caFile), fails('credentials', /HTTP 401/));
});

test('a web page instead of a version list: not ARC REST', async (t) => {
  const s = await fakeHttps(
    world,
    (fn) => t.after(fn),
    (_q, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>It works!</body></html>'),
  );
  await assert.rejects(
    probe(s.url, world.userCert, world.userKey, world.caFile),
    fails('not-arc', /not an ARC REST version list .*text\/html/),
  );
});

test('404 on /rest (wrong service path): not ARC REST, with the path', async (t) => {
  const s = await fakeHttps(
    world,
    (fn) => t.after(fn),
    (_q, res) => res.writeHead(404, 'Not Found').end(),
  );
  await assert.rejects(
    probe(s.url, world.userCert, world.userKey, world.caFile),
    fails('not-arc', /GET \/arex\/rest answered HTTP 404 Not Found/),
  );
});

test('versions fine but the jobs interface is missing: not ARC REST', async (t) => {
  const s = await fakeHttps(
    world,
    (fn) => t.after(fn),
    (req, res) => {
      if (req.url === '/arex/rest') res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"1.0"}');
      else res.writeHead(404, 'Not Found').end();
    },
  );
  await assert.rejects(
    probe(s.url, world.userCert, world.userKey, world.caFile),
    fails('not-arc', /jobs\?action=status answered HTTP 404/),
  );
});

test('plain HTTP on the port: does not speak TLS', async (t) => {
  const url = await fakeHttp((fn) => t.after(fn));
  await assert.rejects(probe(url, world.userCert, world.userKey, world.caFile), fails('not-arc', /does not speak TLS/));
});

test('unreadable and non-PEM credential files are usage errors naming the option', async () => {
  const missing = join(world.dir, 'nope.pem');
  await assert.rejects(
    readCredentials(missing, world.userKey, world.caFile),
    fails('usage', /cannot read --cert .*nope\.pem \(ENOENT\)/),
  );
  await assert.rejects(readCredentials(world.userCert, missing, world.caFile), fails('usage', /cannot read --key/));
  const junk = join(world.dir, 'junk.pem');
  writeFileSync(junk, 'hello');
  await assert.rejects(
    readCredentials(world.userCert, world.userKey, junk),
    fails('usage', /--ca .* holds no CA certificate/),
  );
  await assert.rejects(
    readCredentials(world.userCert, world.userCert, world.caFile),
    fails('usage', /--key .* holds no private key/),
  );
});

test('a key that does not belong to the certificate: usage error', async (t) => {
  const s = await fakeHttps(world, (fn) => t.after(fn), arcHandler('{"version":"1.0"}'));
  await assert.rejects(
    probe(s.url, world.userCert, world.otherUserKey, world.caFile),
    fails('usage', /does not belong|not usable PEM/),
  );
});
