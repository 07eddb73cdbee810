// Token verification with real signed tokens: every check of the WLCG profile refuses
// with a reason naming it (never the token), and good RS256 and ES256 tokens give the
// identity (owner key <iss>#<sub>, scopes, groups).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicKey } from 'node:crypto';
import { IssuerKeys } from '../../../src/auth/token/issuer-keys.js';
import { verifyToken, type VerifyContext } from '../../../src/auth/token/verify.js';
import { TokenAuthenticator } from '../../../src/auth/token/token-authenticator.js';
import { removeDir, tempDir } from '../../helpers/service.js';
import { ANY, hmac, newKey, sign, unsigned, type TestKey } from './fixture.js';

const ISS = 'https://issuer.example/realm';
const SERVICE = 'https://ce.example:8443/arex';

describe('bearer token verification', () => {
  let dir: string;
  let rsa: TestKey;
  let ec: TestKey;
  let stranger: TestKey;
  let ctx: VerifyContext;

  const refused = async (token: string, reason: RegExp) => {
    const r = await verifyToken(token, ctx);
    assert.equal(r.ok, false, 'refused');
    if (!r.ok) {
      assert.match(r.reason, reason);
      const body = token.split('.')[1] ?? '';
      assert.ok(
        !r.reason.includes(token) && (body.length < 8 || !r.reason.includes(body)),
        'the reason never holds the token',
      );
    }
  };

  before(async () => {
    dir = tempDir('verify');
    [rsa, ec, stranger] = await Promise.all([newKey('RS256'), newKey('ES256'), newKey('ES256')]);
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify({ keys: [rsa.jwk, ec.jwk] }));
    const keys = new IssuerKeys(
      { issuer: ISS, jwksFile: file },
      { refreshMs: 60_000, maxAgeMs: 3_600_000, getJson: () => Promise.reject(new Error('offline')) },
    );
    ctx = { issuers: new Map([[ISS, keys]]), audiences: () => [SERVICE, ANY], clockSkewSeconds: 30 };
  });
  after(() => removeDir(dir));

  it('accepts RS256 and ES256 tokens and reads the identity from the claims', async () => {
    for (const k of [rsa, ec]) {
      const r = await verifyToken(
        await sign(k, {
          iss: ISS,
          sub: 'alice',
          scope: 'openid compute.read  compute.create',
          groups: ['/cms', '/cms/uscms'],
        }),
        ctx,
      );
      assert.ok(r.ok, JSON.stringify(r));
      if (!r.ok) continue;
      assert.equal(r.identity.owner, `${ISS}#alice`);
      assert.deepEqual([r.identity.issuer, r.identity.subject], [ISS, 'alice']);
      assert.deepEqual(r.identity.scopes, ['openid', 'compute.read', 'compute.create']);
      assert.deepEqual(r.identity.groups, ['/cms', '/cms/uscms']);
    }
  });

  it('accepts the service URL as audience, an audience array, a newer minor wlcg.ver and none at all', async () => {
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, aud: SERVICE }), ctx)).ok);
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, aud: ['https://other.example', SERVICE] }), ctx)).ok);
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, ver: '1.7' }), ctx)).ok);
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, ver: null }), ctx)).ok);
  });

  it('refuses alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(
      unsigned({ iss: ISS, sub: 'alice', aud: ANY, exp: now + 600, iat: now, 'wlcg.ver': '1.0' }),
      /alg none/,
    );
  });

  it('refuses HMAC, also with the issuer public key as the secret (algorithm confusion)', async () => {
    await refused(
      await hmac(new TextEncoder().encode('a shared secret of enough length!!'), { iss: ISS }),
      /symmetric signatures \(HS256\)/,
    );
    const pubPem = createPublicKey({ key: rsa.jwk as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    }) as string;
    await refused(await hmac(new TextEncoder().encode(pubPem), { iss: ISS }), /symmetric/);
  });

  it('refuses a token signed by an unknown key, and one whose signature was tampered with', async () => {
    await refused(await sign(stranger, { iss: ISS }), /no key of the token issuer matches/);
    await refused(await sign(stranger, { iss: ISS, kid: ec.kid }), /signature does not verify/);
    const good = await sign(ec, { iss: ISS, sub: 'alice' });
    const [h, , s] = good.split('.');
    const payload = Buffer.from(
      JSON.stringify({ iss: ISS, sub: 'root', aud: ANY, exp: Math.floor(Date.now() / 1000) + 600 }),
    ).toString('base64url');
    await refused(`${h}.${payload}.${s}`, /signature does not verify/);
  });

  it('refuses untrusted issuers and tokens without one', async () => {
    await refused(await sign(ec, { iss: 'https://evil.example' }), /issuer is not trusted/);
    await refused(await sign(ec, { iss: `${ISS}/` }), /issuer is not trusted/);
  });

  it('refuses a wrong audience', async () => {
    await refused(
      await sign(ec, { iss: ISS, aud: 'https://other-ce.example:8443' }),
      /audience \(aud\) does not include this service/,
    );
    await refused(await sign(ec, { iss: ISS, aud: 'https://ce.example:8443/arex/' }), /audience/);
  });

  it('refuses expired, not yet valid and future-issued tokens, within the skew allowance only', async () => {
    await refused(await sign(ec, { iss: ISS, exp: -31, iat: -600 }), /expired \(exp\)/);
    assert.ok(
      (await verifyToken(await sign(ec, { iss: ISS, exp: -10, iat: -600 }), ctx)).ok,
      'expired within the skew',
    );
    await refused(await sign(ec, { iss: ISS, nbf: 120 }), /not yet valid \(nbf\)/);
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, nbf: 10 }), ctx)).ok, 'nbf within the skew');
    await refused(await sign(ec, { iss: ISS, iat: 300 }), /issued in the future \(iat\)/);
  });

  it('refuses an unknown wlcg.ver major and a token without exp or sub', async () => {
    await refused(await sign(ec, { iss: ISS, ver: '2.0' }), /wlcg\.ver/);
    await refused(await sign(ec, { iss: ISS, ver: 'one' }), /wlcg\.ver/);
    await refused(await sign(ec, { iss: ISS, sub: '' }), /claim sub|subject/);
  });

  it('refuses a subject with control characters (it goes into control files and logs) or over 256 characters', async () => {
    await refused(await sign(ec, { iss: ISS, sub: 'alice\nowner=/O=Grid/CN=root' }), /control characters/);
    await refused(await sign(ec, { iss: ISS, sub: 'x\u0000' }), /control characters/);
    await refused(await sign(ec, { iss: ISS, sub: 'a'.repeat(257) }), /too long/);
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, sub: 'a'.repeat(256) }), ctx)).ok);
    assert.ok((await verifyToken(await sign(ec, { iss: ISS, sub: 'Jürgen Müller 1f2e' }), ctx)).ok);
  });

  it('refuses wlcg.groups with control characters (they become the job FQANs, in accounting records and listings)', async () => {
    await refused(await sign(ec, { iss: ISS, sub: 'a', groups: ['/atlas', '/cms\nSite: FORGED'] }), /wlcg\.groups/);
    await refused(await sign(ec, { iss: ISS, sub: 'a', groups: ['/atlas\u2028x'] }), /wlcg\.groups/);
    const ok = await verifyToken(await sign(ec, { iss: ISS, sub: 'a', groups: ['/atlas/prod', '/cms'] }), ctx);
    assert.ok(ok.ok);
    assert.deepEqual(ok.ok && ok.identity.groups, ['/atlas/prod', '/cms']);
  });

  it('refuses what is not a compact JWS, and tokens over the size limit', async () => {
    await refused('not-a-token', /not a JWT/);
    await refused('a.b.c', /not a JWT/);
    await refused(`${'A'.repeat(20_000)}.B.C`, /longer than/);
  });

  it('the authenticator caches a verified token until its exp and no longer', async () => {
    let clock = Date.now();
    const auth = new TokenAuthenticator({ ...ctx, clockSkewSeconds: 0, now: () => clock });
    const t = await sign(ec, { iss: ISS, exp: 60 });
    const a = await auth.verify(t);
    const b = await auth.verify(t);
    assert.ok(a.ok && b.ok);
    assert.equal(a.ok && b.ok && a.identity, b.ok && b.identity, 'the same identity object, from the cache');
    clock += 61_000;
    const c = await auth.verify(t);
    assert.equal(c.ok, false);
  });
});
