// The messaging-service client and the S/MIME signer against the loopback fake AMS
// (test/helpers/fake-ams.ts): the token call with the host certificate, the publish call
// and its answers; every failure the service can give (401, 403, 404, 400, 500, 503, a
// hang, a cut or refused connection, a 200 without ids) is an AmsError, a token that
// ended is fetched again once, and the signature verifies with openssl.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { ensureDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { AmsClient, AmsError, type AmsOptions } from '../../src/messaging/ams-client.js';
import { smimeSigner, SigningError } from '../../src/messaging/smime-signer.js';
import { FakeAms } from '../helpers/fake-ams.js';
import { makeCa, makeUser } from '../helpers/pki.js';

describe('messaging-service client and signer', () => {
  let dir: string;
  let pki: DevPki;
  let ams: FakeAms;
  let base: AmsOptions;
  const clients: AmsClient[] = [];
  const client = (o: Partial<AmsOptions> = {}): AmsClient => {
    const c = new AmsClient({ ...base, ...o });
    clients.push(c);
    return c;
  };
  const msg = (data: string) => [{ attributes: { empaid: 'x/1' }, data }];
  const rejectsWith = async (p: Promise<unknown>, status: number | undefined, text: RegExp) => {
    const e = await p.then(
      () => assert.fail('resolved'),
      (x: unknown) => x,
    );
    assert.ok(e instanceof AmsError, String(e));
    assert.equal(e.status, status, e.message);
    assert.match(e.message, text);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-ams-'));
    pki = await ensureDevPki(join(dir, 'pki'));
    const f = pki.files;
    ams = await FakeAms.start({
      cert: readFileSync(f.hostCert, 'utf8'),
      key: readFileSync(f.hostKey, 'utf8'),
      ca: readFileSync(f.caCert, 'utf8'),
    });
    base = {
      host: '127.0.0.1',
      port: ams.port,
      tokenPort: ams.port,
      project: 'accounting',
      topic: 'gLite-APEL',
      cert: readFileSync(f.hostCert, 'utf8'),
      key: readFileSync(f.hostKey, 'utf8'),
      ca: [readFileSync(f.caCert, 'utf8')],
      timeoutMs: 2000,
    };
  });
  after(async () => {
    for (const c of clients) c.close();
    await ams.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gets a token with the host certificate once, then publishes and returns the ids', async () => {
    const c = client();
    const before = ams.calls.filter((x) => x.call === 'token').length;
    const sign = smimeSigner({ certFile: pki.files.hostCert, keyFile: pki.files.hostKey });
    const ids1 = await c.publish(msg(await sign('APEL-sync-message: v0.1\nSite: S\n%%\n')));
    const ids2 = await c.publish(msg(await sign('second\n')));
    assert.equal(ids1.length, 1);
    assert.notEqual(ids1[0], ids2[0]);
    assert.equal(ams.calls.filter((x) => x.call === 'token').length - before, 1, 'one token call for both');
    await ams.verified();
    const got = ams.received.find((r) => r.amsId === ids1[0])!;
    assert.equal(got.signatureError, undefined);
    assert.equal(got.text?.replace(/\r\n/g, '\n'), 'APEL-sync-message: v0.1\nSite: S\n%%\n');
    assert.equal(got.empaid, 'x/1');
    assert.match(got.signer ?? '', /CN=/);
  });

  it('a client certificate of another CA gets no token (401), and nothing is published', async () => {
    const ca = await makeCa();
    const other = await makeUser(ca);
    const n = ams.received.length;
    await rejectsWith(
      client({ cert: other.pem, key: other.keyPem }).publish(msg('x')),
      401,
      /token call.*401.*UNAUTHENTICATED/,
    );
    assert.equal(ams.received.length, n);
  });

  it('a host pair renewed while the client lives is used from the next call on (no restart)', async () => {
    const ca = await makeCa();
    const other = await makeUser(ca);
    let now = { cert: other.pem, key: other.keyPem, ca: base.ca };
    const c = client({ currentTls: () => now });
    // The pair of now is one the messaging service does not know: no token.
    await rejectsWith(c.publish(msg('x')), 401, /token call.*401/);
    // The site renews it (SIGHUP): the same client, without a restart, gets a token and publishes.
    now = { cert: base.cert, key: base.key, ca: base.ca };
    const ids = await c.publish(msg('renewed'));
    assert.equal(ids.length, 1);
    // And back: a pair that stopped being accepted is not kept from before.
    now = { cert: other.pem, key: other.keyPem, ca: base.ca };
    ams.revokeTokens();
    await rejectsWith(c.publish(msg('y')), 401, /token call.*401/);
  });

  it('a token that ended is fetched again once (401 on publish), and the message goes', async () => {
    const c = client();
    await c.publish(msg('before'));
    ams.revokeTokens();
    const ids = await c.publish(msg('after'));
    await ams.verified();
    assert.equal(ams.received.find((r) => r.amsId === ids[0])?.signatureError !== undefined, true, 'unsigned text');
  });

  it('a fresh token refused (401) is an error, not a loop', async () => {
    ams.publishFaults.push(401);
    await rejectsWith(client().publish(msg('x')), 401, /publish call.*401/);
  });

  it("403, 404 (unknown topic), 500 and 503 are errors with the status and the service's reason", async () => {
    const c = client();
    await c.publish(msg('warm'));
    ams.publishFaults.push(403, 403);
    await rejectsWith(c.publish(msg('x')), 403, /403.*FORBIDDEN/);
    await rejectsWith(client({ topic: 'nope' }).publish(msg('x')), 404, /404: Topic doesn't exist \(NOT_FOUND\)/);
    ams.publishFaults.push(500);
    await rejectsWith(c.publish(msg('x')), 500, /500.*INTERNAL/);
    ams.publishFaults.push(503);
    await rejectsWith(c.publish(msg('x')), 503, /503.*UNAVAILABLE/);
    ams.tokenFaults.push(503);
    await rejectsWith(client().publish(msg('x')), 503, /token call.*503/);
  });

  it('a service that does not answer times out; a cut connection fails; no status', async () => {
    const c = client({ timeoutMs: 300 });
    await c.publish(msg('warm'));
    ams.publishFaults.push('hang');
    const t0 = Date.now();
    await rejectsWith(c.publish(msg('x')), undefined, /no answer within 300 ms/);
    assert.ok(Date.now() - t0 < 5000);
    ams.publishFaults.push('reset');
    await rejectsWith(c.publish(msg('x')), undefined, /publish call/);
  });

  it('a refused connection fails at once with no status', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise((r) => s.close(r));
    await rejectsWith(client({ port, tokenPort: port }).publish(msg('x')), undefined, /ECONNREFUSED/);
  });

  it('a 200 without one id per message is not taken as published', async () => {
    const c = client();
    await c.publish(msg('warm'));
    ams.publishFaults.push('no-ids');
    await rejectsWith(c.publish(msg('x')), 200, /answered 200 without one message id per message/);
    assert.equal((await c.publish([...msg('a'), ...msg('b')])).length, 2);
  });

  it('the signer fails clearly when the key cannot be read', async () => {
    const sign = smimeSigner({ certFile: pki.files.hostCert, keyFile: join(dir, 'missing.pem') });
    await assert.rejects(
      sign('x'),
      (e: unknown) => e instanceof SigningError && /openssl smime -sign failed/.test(e.message),
    );
    const none = smimeSigner({
      certFile: pki.files.hostCert,
      keyFile: pki.files.hostKey,
      openssl: join(dir, 'no-openssl'),
    });
    await assert.rejects(
      none('x'),
      (e: unknown) => e instanceof SigningError && /could not be started/.test(e.message),
    );
  });
});
