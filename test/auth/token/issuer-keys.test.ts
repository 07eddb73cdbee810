// An issuer's keys by discovery over real https (the dev PKI's CA): loaded once and
// cached, fetched again on an unknown key id (rotation), at most once per interval
// however many unknown key ids arrive, concurrent requests sharing one fetch, failures
// keeping the old keys; and keys from a JWK set file.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initDevPki } from '../../../src/pki/dev-pki.js';
import { IssuerKeys } from '../../../src/auth/token/issuer-keys.js';
import { httpsGetJson } from '../../../src/http/https-get-json.js';
import { verifyToken, type VerifyContext } from '../../../src/auth/token/verify.js';
import { removeDir, tempDir } from '../../helpers/service.js';
import { newKey, sign, startJwksServer, type JwksServer, type TestKey } from './fixture.js';

describe('issuer keys: discovery, cache, rotation, rate limit', () => {
  let dir: string;
  let ca: string;
  let server: JwksServer;
  let k1: TestKey;
  let k2: TestKey;
  let clock = 1_000_000;
  const loads: { error?: string }[] = [];

  const keysOf = (refreshMs = 60_000, maxAgeMs = 3_600_000) =>
    new IssuerKeys(
      { issuer: server.issuer },
      {
        refreshMs,
        maxAgeMs,
        now: () => clock,
        getJson: (u) => httpsGetJson(u, { ca: [ca] }),
        onLoad: (e) => loads.push(e),
      },
    );
  const ctxOf = (keys: IssuerKeys): VerifyContext => ({
    issuers: new Map([[server.issuer, keys]]),
    audiences: () => ['https://wlcg.cern.ch/jwt/v1/any'],
    clockSkewSeconds: 60,
  });

  before(async () => {
    dir = tempDir('jwks');
    const pki = await initDevPki(join(dir, 'pki'));
    ca = readFileSync(pki.files.caCert, 'utf8');
    [k1, k2] = await Promise.all([newKey('RS256'), newKey('ES256')]);
    server = await startJwksServer(pki.dir, [k1]);
  });
  after(async () => {
    await server.close();
    removeDir(dir);
  });

  it('discovers the key set over https once and serves later tokens from memory', async () => {
    const keys = keysOf();
    const ctx = ctxOf(keys);
    const before = { ...server.hits };
    for (let i = 0; i < 5; i++) {
      const r = await verifyToken(await sign(k1, { iss: server.issuer, sub: `u${i}` }), ctx);
      assert.ok(r.ok, JSON.stringify(r));
    }
    assert.deepEqual(
      { d: server.hits.discovery - before.discovery, j: server.hits.jwks - before.jwks },
      { d: 1, j: 1 },
    );
  });

  it('a rotated key (unknown kid) makes one fetch, and tokens of the new key verify', async () => {
    const keys = keysOf();
    const ctx = ctxOf(keys);
    assert.ok((await verifyToken(await sign(k1, { iss: server.issuer }), ctx)).ok);
    server.keys = [k1, k2];
    clock += 61_000; // past the refresh interval
    const before = server.hits.jwks;
    const r = await verifyToken(await sign(k2, { iss: server.issuer }), ctx);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(server.hits.jwks - before, 1);
    server.keys = [k1];
  });

  it('a flood of unknown key ids costs at most one fetch per interval, concurrent ones sharing it', async () => {
    const keys = keysOf();
    const ctx = ctxOf(keys);
    assert.ok((await verifyToken(await sign(k1, { iss: server.issuer }), ctx)).ok);
    clock += 61_000;
    const before = server.hits.jwks;
    const forged = await Promise.all(
      Array.from({ length: 50 }, (_, i) => sign(k2, { iss: server.issuer, kid: `made-up-${i}` })),
    );
    const rs = await Promise.all(forged.map((t) => verifyToken(t, ctx)));
    for (const r of rs)
      assert.deepEqual(r, { ok: false, reason: "no key of the token issuer matches the token's key id (kid)" });
    for (const t of forged) assert.equal((await verifyToken(t, ctx)).ok, false);
    assert.equal(server.hits.jwks - before, 1, 'one fetch within the interval');
    clock += 61_000;
    for (const t of forged.slice(0, 10)) assert.equal((await verifyToken(t, ctx)).ok, false);
    assert.equal(server.hits.jwks - before, 2, 'one more after the interval');
    // Known keys still verify meanwhile, without fetching.
    assert.ok((await verifyToken(await sign(k1, { iss: server.issuer }), ctx)).ok);
    assert.equal(server.hits.jwks - before, 2);
  });

  it('a failed fetch keeps the keys already held; an issuer never reached refuses its tokens', async () => {
    const keys = keysOf(1000, 60_000);
    const ctx = ctxOf(keys);
    assert.ok((await verifyToken(await sign(k1, { iss: server.issuer }), ctx)).ok);
    const unreachable = new IssuerKeys(
      { issuer: 'https://127.0.0.1:1' },
      {
        refreshMs: 1000,
        maxAgeMs: 60_000,
        now: () => clock,
        getJson: (u) => httpsGetJson(u, { ca: [ca], timeoutMs: 2000 }),
      },
    );
    const bad = ctxOf(unreachable);
    const r = await verifyToken(await sign(k1, { iss: server.issuer }), {
      ...bad,
      issuers: new Map([[server.issuer, unreachable]]),
    });
    assert.equal(r.ok, false);
    // The held keys survive an expired cache whose refresh fails.
    await server.close().catch(() => undefined);
    clock += 120_000;
    const again = await verifyToken(await sign(k1, { iss: server.issuer }), ctx);
    assert.ok(again.ok, JSON.stringify(again));
    assert.ok(loads.some((l) => l.error !== undefined));
    server = await startJwksServer(join(dir, 'pki'), [k1]);
  });

  it('a server whose certificate the CAs do not vouch for is not trusted', async () => {
    const keys = new IssuerKeys(
      { issuer: server.issuer },
      { refreshMs: 1, maxAgeMs: 60_000, getJson: (u) => httpsGetJson(u, { ca: [] }) },
    );
    const r = await verifyToken(await sign(k1, { iss: server.issuer }), ctxOf(keys));
    assert.equal(r.ok, false);
  });

  it('keys from a JWK set file, read again when a token names a key it does not hold', async () => {
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [k1.jwk] }));
    const iss = 'https://file-issuer.example';
    const keys = new IssuerKeys(
      { issuer: iss, jwksFile: file },
      {
        refreshMs: 60_000,
        maxAgeMs: 3_600_000,
        now: () => clock,
        getJson: () => Promise.reject(new Error('no network')),
      },
    );
    const ctx: VerifyContext = {
      issuers: new Map([[iss, keys]]),
      audiences: () => ['https://wlcg.cern.ch/jwt/v1/any'],
      clockSkewSeconds: 0,
    };
    assert.ok((await verifyToken(await sign(k1, { iss }), ctx)).ok);
    writeFileSync(file, JSON.stringify({ keys: [k1.jwk, k2.jwk] }));
    assert.equal(
      (await verifyToken(await sign(k2, { iss }), ctx)).ok,
      false,
      'within the interval the file is not read again',
    );
    clock += 60_000;
    assert.ok((await verifyToken(await sign(k2, { iss }), ctx)).ok);
    assert.equal(keys.loads, 2);
  });
});
