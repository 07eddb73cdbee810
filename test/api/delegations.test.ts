// The delegation endpoints over the real Fastify app with real cryptography: the
// server's RSA key and request, the client's RFC 3820 proxy signed from the user's
// proxy as arcproxy/pyarcrest do, chain verification against the test CA.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { x509 } from '../../src/pki/x509-lib.js';
import { parseCertificate, pemBlocks } from '../../src/pki/certificate.js';
import { generateRsaKeyPair } from '../../src/pki/keys.js';
import { base, fakeJwt, makeFixture, signAs, type Fixture, type User } from '../delegations/fixture.js';

const J = { accept: 'application/json' };
const X = { accept: 'application/xml' };

async function newX509(
  f: Fixture,
  u: User,
  v: '1.0' | '1.1' = '1.1',
  query = '',
): Promise<{ id: string; csr: string; location: string }> {
  const r = await f.app.inject({ method: 'POST', url: `${base(v)}?action=new${query}`, headers: u.h });
  assert.equal(r.statusCode, 201, r.body);
  const location = String(r.headers.location);
  return { id: location.split('/').pop() as string, csr: r.body, location };
}

const put = (f: Fixture, u: User, id: string, body: string | Buffer, v: '1.0' | '1.1' = '1.1') =>
  f.app.inject({
    method: 'PUT',
    url: `${base(v)}/${id}`,
    headers: { ...u.h, ...J, 'content-type': 'application/x-pem-file' },
    payload: body,
  });

const act = (
  f: Fixture,
  u: User,
  id: string,
  action: string,
  extra: { v?: '1.0' | '1.1'; query?: string; headers?: Record<string, string> } = {},
) =>
  f.app.inject({
    method: 'POST',
    url: `${base(extra.v)}/${id}?action=${action}${extra.query ?? ''}`,
    headers: { ...u.h, ...J, ...(extra.headers ?? {}) },
  });

const list = async (f: Fixture, u: User, v: '1.0' | '1.1' = '1.1', query = ''): Promise<unknown> => {
  const r = await f.app.inject({ method: 'GET', url: `${base(v)}${query}`, headers: { ...u.h, ...J } });
  assert.equal(r.statusCode, 200, r.body);
  return JSON.parse(r.body);
};

/** A complete X.509 delegation of `u`. */
async function delegated(f: Fixture, u: User, v: '1.0' | '1.1' = '1.1'): Promise<{ id: string; chain: string }> {
  const { id, csr } = await newX509(f, u, v);
  const chain = await signAs(u, csr);
  const r = await put(f, u, id, chain, v);
  assert.equal(r.statusCode, 200, r.body);
  return { id, chain };
}

function code(body: string): string {
  return (JSON.parse(body) as { code: string }).code;
}

const spkiOfKeyPem = (pem: string): Buffer =>
  createPublicKey(createPrivateKey(pem)).export({ type: 'spki', format: 'der' });
const spkiOfCert = (der: Uint8Array): Buffer =>
  createPublicKey({ key: Buffer.from(parseCertificate(der).spkiDer), format: 'der', type: 'spki' }).export({
    type: 'spki',
    format: 'der',
  });

describe('X.509 delegation in two steps', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture();
  });
  after(() => f.close());

  it('1.1: new → 201 with a CSR and Location, PUT of the signed chain → 200, get, list, proxy file on disk', async () => {
    const r = await f.app.inject({ method: 'POST', url: `${base()}?action=new&type=x509`, headers: f.alice.h });
    assert.equal(r.statusCode, 201);
    assert.equal(r.headers['content-type'], 'application/x-pem-file');
    const location = String(r.headers.location);
    assert.match(location, /^\/arex\/rest\/1\.1\/delegations\/[0-9a-f]{32}$/);
    const id = location.split('/').pop() as string;
    assert.match(r.body, /^-----BEGIN CERTIFICATE REQUEST-----\n[\s\S]+-----END CERTIFICATE REQUEST-----\n$/);
    const csr = new x509.Pkcs10CertificateRequest(r.body);
    assert.equal(await csr.verify(), true, 'proof of possession');
    assert.equal(csr.subject, '', 'empty subject: the signer names the proxy');
    assert.equal(
      createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' }).asymmetricKeyDetails
        ?.modulusLength,
      2048,
    );

    // Not usable (and not listed) before the certificate arrives.
    assert.deepEqual(await list(f, f.alice), { delegation: [] });
    assert.equal(f.wiring.port.ownedBy(id, f.alice.owner), false);

    const chain = await signAs(f.alice, r.body);
    const p = await f.app.inject({
      method: 'PUT',
      url: location,
      headers: { ...f.alice.h, 'content-type': 'application/x-pem-file' },
      payload: chain,
    });
    assert.equal(p.statusCode, 200, p.body);
    assert.equal(p.body, '');

    const g = await act(f, f.alice, id, 'get');
    assert.equal(g.statusCode, 200);
    assert.equal(g.headers['content-type'], 'application/x-pem-file');
    assert.doesNotMatch(g.body, /PRIVATE KEY/);
    assert.deepEqual(pemBlocks(g.body), pemBlocks(chain), 'the stored public part is the chain as sent');

    assert.deepEqual(await list(f, f.alice), { delegation: [{ id, type: 'x509' }] });
    assert.equal(f.wiring.port.ownedBy(id, f.alice.owner), true);
    assert.equal(f.wiring.expiry(id)?.getTime(), parseCertificate(pemBlocks(chain)[0] as Buffer).notAfter.getTime());

    // The proxy file: arcproxy order, 0600 in a 0700 directory, the key certifies the proxy.
    assert.equal((await stat(f.keyDir)).mode & 0o777, 0o700);
    const files = (await readdir(f.keyDir)).filter((n) => n.startsWith(id));
    assert.deepEqual(
      files.map((n) => n.slice(n.lastIndexOf('.'))),
      ['.proxy'],
    );
    const path = join(f.keyDir, files[0] as string);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const text = await readFile(path, 'utf8');
    const blocks = [...text.matchAll(/-----BEGIN ([A-Z ]+)-----/g)].map((m) => m[1]);
    assert.deepEqual(blocks, ['CERTIFICATE', 'RSA PRIVATE KEY', 'CERTIFICATE', 'CERTIFICATE']);
    const cred = await f.wiring.credentialFor(id, f.alice.owner);
    assert.equal(cred?.kind, 'x509');
    if (cred?.kind !== 'x509') return;
    assert.deepEqual(pemBlocks(cred.certChainPem), pemBlocks(chain));
    assert.deepEqual(spkiOfKeyPem(cred.keyPem), spkiOfCert(pemBlocks(chain)[0] as Buffer));
  });

  it('1.0: new without type, PUT to the Location path, listing without type (XML and JSON)', async () => {
    const { id, csr, location } = await newX509(f, f.bob, '1.0');
    assert.match(location, /^\/arex\/rest\/1\.0\/delegations\/[0-9a-f]{32}$/);
    const p = await f.app.inject({ method: 'PUT', url: location, headers: f.bob.h, payload: await signAs(f.bob, csr) });
    assert.equal(p.statusCode, 200, p.body);
    const x = await f.app.inject({ method: 'GET', url: base('1.0'), headers: { ...f.bob.h, ...X } });
    assert.equal(x.statusCode, 200);
    assert.match(
      x.body,
      new RegExp(`<delegations>\\s*<delegation>\\s*<id>${id}</id>\\s*</delegation>\\s*</delegations>`),
    );
    assert.deepEqual(await list(f, f.bob, '1.0'), { delegation: [{ id }] });
    const x11 = await f.app.inject({ method: 'GET', url: base('1.1'), headers: { ...f.bob.h, ...X } });
    assert.match(x11.body, new RegExp(`<id>${id}</id>\\s*<type>x509</type>`));
    const h = await f.app.inject({ method: 'HEAD', url: base('1.0'), headers: { ...f.bob.h, ...J } });
    assert.equal(h.statusCode, 200);
    assert.equal(h.body, '');
  });

  it('renew → 201 with a new CSR in both versions; jobs keep the old proxy until the new one is PUT', async () => {
    const { id, chain: first } = await delegated(f, f.alice);
    let chain = first;
    for (const v of ['1.0', '1.1'] as const) {
      const r = await act(f, f.alice, id, 'renew', { v });
      assert.equal(r.statusCode, 201, `${v}: the ARC client and pyarcrest accept only 201`);
      assert.equal(r.headers['content-type'], 'application/x-pem-file');
      const before = await f.wiring.credentialFor(id, f.alice.owner);
      assert.deepEqual(
        before?.kind === 'x509' && pemBlocks(before.certChainPem)[0],
        pemBlocks(chain)[0],
        'old credential still in use',
      );
      const renewed = await signAs(f.alice, r.body);
      const p = await put(f, f.alice, id, renewed, v);
      assert.equal(p.statusCode, 200, p.body);
      const after = await f.wiring.credentialFor(id, f.alice.owner);
      assert.ok(after?.kind === 'x509');
      if (after?.kind !== 'x509') return;
      assert.deepEqual(
        pemBlocks(after.certChainPem)[0],
        pemBlocks(renewed)[0],
        'the next transfer gets the renewed proxy',
      );
      assert.deepEqual(spkiOfKeyPem(after.keyPem), spkiOfCert(pemBlocks(renewed)[0] as Buffer));
      assert.notDeepEqual(
        spkiOfKeyPem(after.keyPem),
        spkiOfCert(pemBlocks(chain)[0] as Buffer),
        'a new key pair per renewal',
      );
      chain = renewed;
    }
    const files = (await readdir(f.keyDir)).filter((n) => n.startsWith(id));
    assert.equal(files.length, 1, `only the current proxy file is left: ${files.join(' ')}`);
  });

  it('a repeated PUT (lost answer, retry) of a chain for the current key is accepted again', async () => {
    const { id, chain } = await delegated(f, f.alice);
    const again = await put(f, f.alice, id, chain);
    assert.equal(again.statusCode, 200, again.body);
    const g = await act(f, f.alice, id, 'get');
    assert.deepEqual(pemBlocks(g.body), pemBlocks(chain));
  });

  it('one delegation id is usable by the port for its owner only', async () => {
    const { id } = await delegated(f, f.alice);
    assert.equal(f.wiring.port.ownedBy(id, f.alice.owner), true);
    assert.equal(f.wiring.port.ownedBy(id, f.bob.owner), false);
    assert.equal(f.wiring.port.ownedBy('0'.repeat(32), f.alice.owner), false);
    assert.equal(f.wiring.port.ownedBy('../etc/passwd', f.alice.owner), false);
    assert.equal(await f.wiring.credentialFor(id, f.bob.owner), undefined);
    assert.equal(
      await f.wiring.credentialFor(undefined, f.alice.owner),
      undefined,
      'a job without a delegation has no credential',
    );
  });
});

describe('PUT refusals: each a 4xx with a reason, nothing stored', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture({ maxCertificateBodyBytes: 8192 });
  });
  after(() => f.close());

  async function refused(
    put: (id: string, csr: string) => Promise<{ statusCode: number; body: string }>,
    status: number,
    expected: string,
  ): Promise<string> {
    const { id, csr } = await newX509(f, f.alice);
    const r = await put(id, csr);
    assert.equal(r.statusCode, status, r.body);
    assert.equal(code(r.body), expected);
    // Still waiting for its certificate: the request can be answered correctly afterwards.
    assert.equal((await act(f, f.alice, id, 'get')).statusCode, 409);
    const ok = await put2(id, csr);
    assert.equal(ok.statusCode, 200, ok.body);
    return JSON.parse(r.body).reason as string;
  }
  const put2 = async (id: string, csr: string) => put(f, f.alice, id, await signAs(f.alice, csr));

  it('a certificate for another key (a different request signed) → 400 key mismatch', async () => {
    const keys = await generateRsaKeyPair();
    const other = await x509.Pkcs10CertificateRequestGenerator.create({
      keys,
      signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    });
    const reason = await refused(
      async (id) => put(f, f.alice, id, await signAs(f.alice, other.toString('pem'))),
      400,
      'CE_ERR_DELEG_KEY_MISMATCH',
    );
    assert.match(reason, /another public key/);
  });

  it('signed by another user → 403 wrong identity', async () => {
    const reason = await refused(
      async (id, csr) => put(f, f.alice, id, await signAs(f.bob, csr)),
      403,
      'CE_ERR_DELEG_WRONG_IDENTITY',
    );
    assert.match(reason, /CN=Bob/);
  });

  it('an expired proxy → 400 expired', async () => {
    const reason = await refused(
      async (id, csr) =>
        put(
          f,
          f.alice,
          id,
          await signAs(f.alice, csr, { now: new Date(Date.now() - 30 * 60_000), lifetimeSeconds: 60 }),
        ),
      400,
      'CE_ERR_DELEG_EXPIRED',
    );
    assert.match(reason, /expired/);
  });

  it('the same DN under an untrusted CA → 400 chain refused', async () => {
    assert.equal(f.mallory.dn, f.alice.dn);
    const reason = await refused(
      async (id, csr) => put(f, f.alice, id, await signAs(f.mallory, csr)),
      400,
      'CE_ERR_DELEG_CHAIN_REFUSED',
    );
    assert.match(reason, /not a trusted CA|not trusted/);
  });

  it('the proxy alone from a caller without a TLS client chain to complete it with → 400', async () => {
    await refused(
      async (id, csr) =>
        put(
          f,
          f.alice,
          id,
          pemBlocks(await signAs(f.alice, csr))
            .slice(0, 1)
            .map((d) => `-----BEGIN CERTIFICATE-----\n${d.toString('base64')}\n-----END CERTIFICATE-----\n`)
            .join(''),
        ),
      400,
      'CE_ERR_DELEG_NOT_CALLERS_PROXY',
    );
  });

  it('garbage → 400 not PEM; a PEM block that is no certificate → 400', async () => {
    await refused((id) => put(f, f.alice, id, 'not a certificate\n'), 400, 'CE_ERR_DELEG_NOT_PEM');
    await refused(
      (id) =>
        put(
          f,
          f.alice,
          id,
          `-----BEGIN CERTIFICATE-----\n${Buffer.from('definitely not DER').toString('base64')}\n-----END CERTIFICATE-----\n`,
        ),
      400,
      'CE_ERR_DELEG_NOT_PEM',
    );
    await refused(
      (id) => put(f, f.alice, id, Buffer.from([0x30, 0x82, 0xff, 0xff, 0, 1, 2, 3])),
      400,
      'CE_ERR_DELEG_NOT_PEM',
    );
  });

  it('an empty body (or whitespace) → 400 missing payload', async () => {
    await refused((id) => put(f, f.alice, id, ''), 400, 'CE_ERR_DELEG_EMPTY_BODY');
    await refused((id) => put(f, f.alice, id, ' \r\n'), 400, 'CE_ERR_DELEG_EMPTY_BODY');
  });

  it('a body over delegations.maxCertificateBodyBytes → 413', async () => {
    await refused(
      async (id, csr) => put(f, f.alice, id, (await signAs(f.alice, csr)) + 'x'.repeat(9000)),
      413,
      'CE_ERR_HTTP_BODY_TOO_LARGE',
    );
  });

  it('an unknown id → 404 (PUT, get, renew, delete), malformed ids too', async () => {
    for (const id of [
      '0123456789abcdef0123456789abcdef',
      'nosuchid',
      '0123456789ABCDEF0123456789ABCDEF',
      'x'.repeat(300),
    ]) {
      const p = await put(f, f.alice, id, 'x');
      assert.equal(p.statusCode, 404, `${id} PUT`);
      assert.equal(code(p.body), 'CE_ERR_DELEG_NOT_FOUND');
      for (const a of ['get', 'renew', 'delete']) {
        const r = await act(f, f.alice, id, a);
        assert.equal(r.statusCode, 404, `${id} ${a}`);
        assert.equal(code(r.body), 'CE_ERR_DELEG_NOT_FOUND');
      }
    }
  });

  it("another user's delegation → 404 for every action and PUT; the owner's stays intact", async () => {
    const { id, chain } = await delegated(f, f.alice);
    const bobsChain = await signAs(f.bob, (await newX509(f, f.bob)).csr);
    const p = await put(f, f.bob, id, bobsChain);
    assert.equal(p.statusCode, 404);
    for (const a of ['get', 'renew', 'delete']) {
      const r = await act(f, f.bob, id, a);
      assert.equal(r.statusCode, 404, a);
      assert.equal(code(r.body), 'CE_ERR_DELEG_NOT_FOUND');
    }
    const listed = (await list(f, f.bob)) as { delegation: { id: string }[] };
    assert.ok(!listed.delegation.some((d) => d.id === id));
    const g = await act(f, f.alice, id, 'get');
    assert.equal(g.statusCode, 200);
    assert.deepEqual(pemBlocks(g.body), pemBlocks(chain));
  });

  it('get before the PUT → 409 no credential yet; PUT on a jwt delegation → 409', async () => {
    const { id } = await newX509(f, f.alice);
    const g = await act(f, f.alice, id, 'get');
    assert.equal(g.statusCode, 409);
    assert.equal(code(g.body), 'CE_ERR_DELEG_NO_CREDENTIAL');
    const n = await f.app.inject({
      method: 'POST',
      url: `${base()}?action=new&type=jwt`,
      headers: { ...f.alice.h, 'x-delegation': `bearer ${fakeJwt()}` },
    });
    const jid = String(n.headers.location).split('/').pop() as string;
    const p = await put(f, f.alice, jid, 'anything');
    assert.equal(p.statusCode, 409);
    assert.equal(code(p.body), 'CE_ERR_DELEG_TYPE_MISMATCH');
  });
});

describe('requests that are refused before anything is made', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture({ maxPerUser: 2, maxTokenBytes: 1024 });
  });
  after(() => f.close());

  const post = (url: string, headers: Record<string, string> = {}) =>
    f.app.inject({ method: 'POST', url, headers: { ...f.alice.h, ...J, ...headers } });

  it('an unknown type → 400 (new and listing); 1.0 with type=jwt → 400', async () => {
    let r = await post(`${base()}?action=new&type=pkcs12`);
    assert.equal(r.statusCode, 400);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TYPE_UNKNOWN');
    r = await f.app.inject({ method: 'GET', url: `${base()}?type=pkcs12`, headers: { ...f.alice.h, ...J } });
    assert.equal(r.statusCode, 400);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TYPE_UNKNOWN');
    r = await post(`${base('1.0')}?action=new&type=jwt`, { 'x-delegation': `bearer ${fakeJwt()}` });
    assert.equal(r.statusCode, 400);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TYPE_NOT_IN_VERSION');
    assert.deepEqual(await list(f, f.alice), { delegation: [] });
  });

  it('missing or unknown action → 400, on the collection and on a delegation', async () => {
    for (const [url, c] of [
      [base(), 'CE_ERR_HTTP_ACTION_MISSING'],
      [`${base()}?action=`, 'CE_ERR_HTTP_ACTION_MISSING'],
      [`${base()}?action=get`, 'CE_ERR_HTTP_ACTION_UNKNOWN'],
      [`${base()}/0123456789abcdef0123456789abcdef`, 'CE_ERR_HTTP_ACTION_MISSING'],
      [`${base()}/0123456789abcdef0123456789abcdef?action=new`, 'CE_ERR_HTTP_ACTION_UNKNOWN'],
    ] as const) {
      const r = await post(url);
      assert.equal(r.statusCode, 400, url);
      assert.equal(code(r.body), c, url);
    }
  });

  it('unsupported methods → 405 with Allow (GET/HEAD/DELETE on a delegation, PUT/DELETE on the collection)', async () => {
    for (const method of ['GET', 'HEAD', 'DELETE'] as const) {
      const r = await f.app.inject({ method, url: `${base()}/0123456789abcdef0123456789abcdef`, headers: f.alice.h });
      assert.equal(r.statusCode, 405, method);
      assert.equal(r.headers.allow, 'POST, PUT');
    }
    for (const method of ['PUT', 'DELETE'] as const) {
      const r = await f.app.inject({ method, url: base(), headers: f.alice.h });
      assert.equal(r.statusCode, 405, method);
      assert.equal(r.headers.allow, 'GET, POST, HEAD');
    }
  });

  it('jwt without X-Delegation → 400; a token that is no JWT → 400; an oversized one → 431; an expired one → 400', async () => {
    let r = await post(`${base()}?action=new&type=jwt`);
    assert.equal(r.statusCode, 400);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TOKEN_MISSING');
    r = await post(`${base()}?action=new&type=jwt`, { 'x-delegation': 'bearer ' });
    assert.equal(code(r.body), 'CE_ERR_DELEG_TOKEN_MISSING');
    for (const bad of [
      'not-a-jwt',
      'a.b',
      `${Buffer.from('[1]').toString('base64url')}.e30.c2ln`,
      `${Buffer.from('{"typ":"JWT"}').toString('base64url')}.e30.c2ln`,
    ]) {
      r = await post(`${base()}?action=new&type=jwt`, { 'x-delegation': `bearer ${bad}` });
      assert.equal(r.statusCode, 400, bad);
      assert.equal(code(r.body), 'CE_ERR_DELEG_TOKEN_MALFORMED');
      assert.ok(!r.body.includes(bad), 'the token is not echoed');
    }
    r = await post(`${base()}?action=new&type=jwt`, { 'x-delegation': `bearer ${fakeJwt({ pad: 'x'.repeat(1200) })}` });
    assert.equal(r.statusCode, 431);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TOKEN_TOO_LARGE');
    r = await post(`${base()}?action=new&type=jwt`, {
      'x-delegation': `bearer ${fakeJwt({ exp: Math.floor(Date.now() / 1000) - 60 })}`,
    });
    assert.equal(r.statusCode, 400);
    assert.equal(code(r.body), 'CE_ERR_DELEG_EXPIRED');
    assert.deepEqual(await list(f, f.alice), { delegation: [] });
  });

  it('more than delegations.maxPerUser → 403; other users are not affected', async () => {
    await newX509(f, f.alice);
    await newX509(f, f.alice);
    const r = await post(`${base()}?action=new`);
    assert.equal(r.statusCode, 403);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TOO_MANY');
    await newX509(f, f.bob);
  });
});

describe('JWT delegation (1.1)', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture();
  });
  after(() => f.close());

  const create = async (headers: Record<string, string>) => {
    const r = await f.app.inject({
      method: 'POST',
      url: `${base()}?action=new&type=jwt`,
      headers: { ...f.alice.h, ...headers },
    });
    assert.equal(r.statusCode, 201, r.body);
    assert.equal(r.body, '');
    const location = String(r.headers.location);
    assert.match(location, /^\/arex\/rest\/1\.1\/delegations\/[0-9a-f]{32}$/);
    return location.split('/').pop() as string;
  };

  it('new with X-Delegation: bearer → 201 + Location; get → application/jwt; listed only as jwt and only in 1.1', async () => {
    const token = fakeJwt();
    const id = await create({ 'x-delegation': `bearer ${token}` });
    const g = await act(f, f.alice, id, 'get');
    assert.equal(g.statusCode, 200);
    assert.equal(g.headers['content-type'], 'application/jwt');
    assert.equal(g.body, token);
    assert.deepEqual(await list(f, f.alice, '1.1', '?type=jwt'), { delegation: [{ id, type: 'jwt' }] });
    assert.deepEqual(await list(f, f.alice, '1.1', '?type=x509'), { delegation: [] });
    assert.deepEqual(await list(f, f.alice, '1.0'), { delegation: [] });
    assert.deepEqual(await list(f, f.alice, '1.0', '?type=jwt'), { delegation: [] }, '1.0 ignores type (A-REX)');
    assert.equal(f.wiring.port.ownedBy(id, f.alice.owner), true);
    assert.deepEqual(await f.wiring.credentialFor(id, f.alice.owner), { kind: 'jwt', token });
    assert.equal(f.wiring.expiry(id), undefined, 'ProxyExpirationTime is for proxies');
    const file = (await readdir(f.keyDir)).find((n) => n.startsWith(id)) as string;
    assert.equal((await stat(join(f.keyDir, file))).mode & 0o777, 0o600);
  });

  it("also takes A-REX 7's X-Token-Delegation, with Bearer (pyarcrest) or bare (ARC client)", async () => {
    const t1 = fakeJwt({ sub: 'one' });
    const t2 = fakeJwt({ sub: 'two' });
    const a = await create({ 'x-token-delegation': `Bearer ${t1}` });
    const b = await create({ 'x-token-delegation': t2 });
    assert.equal((await act(f, f.alice, a, 'get')).body, t1);
    assert.equal((await act(f, f.alice, b, 'get')).body, t2);
  });

  it('renew replaces the token: 200 as pyarcrest sends it, 201 with type=jwt as the ARC 7 client sends it', async () => {
    const id = await create({ 'x-delegation': `bearer ${fakeJwt({ sub: 'old' })}` });
    const t2 = fakeJwt({ sub: 'second' });
    let r = await act(f, f.alice, id, 'renew', { headers: { 'x-token-delegation': `Bearer ${t2}` } });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(await f.wiring.credentialFor(id, f.alice.owner), { kind: 'jwt', token: t2 });
    const t3 = fakeJwt({ sub: 'third' });
    r = await act(f, f.alice, id, 'renew', { query: '&type=jwt', headers: { 'x-token-delegation': t3 } });
    assert.equal(r.statusCode, 201, r.body);
    assert.equal((await act(f, f.alice, id, 'get')).body, t3);
    r = await act(f, f.alice, id, 'renew');
    assert.equal(r.statusCode, 400);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TOKEN_MISSING');
    r = await act(f, f.alice, id, 'renew', { query: '&type=x509' });
    assert.equal(r.statusCode, 409);
    assert.equal(code(r.body), 'CE_ERR_DELEG_TYPE_MISMATCH');
    assert.equal((await readdir(f.keyDir)).filter((n) => n.startsWith(id)).length, 1, 'old token files are removed');
  });

  it('renewing an x509 delegation as jwt → 409, and the delegation is unchanged', async () => {
    const { id, chain } = await delegated(f, f.alice);
    const r = await act(f, f.alice, id, 'renew', {
      query: '&type=jwt',
      headers: { 'x-delegation': `bearer ${fakeJwt()}` },
    });
    assert.equal(r.statusCode, 409);
    assert.deepEqual(pemBlocks((await act(f, f.alice, id, 'get')).body), pemBlocks(chain));
  });

  it('delete → 202; gone from listings at once; 404 afterwards', async () => {
    const id = await create({ 'x-delegation': `bearer ${fakeJwt()}` });
    const d = await act(f, f.alice, id, 'delete');
    assert.equal(d.statusCode, 202, 'pyarcrest checks for 202');
    assert.equal(d.body, '');
    const listed = (await list(f, f.alice)) as { delegation: { id: string }[] };
    assert.ok(!listed.delegation.some((x) => x.id === id));
    assert.equal((await act(f, f.alice, id, 'delete')).statusCode, 404);
    assert.equal((await act(f, f.alice, id, 'get')).statusCode, 404);
    assert.equal((await readdir(f.keyDir)).filter((n) => n.startsWith(id)).length, 0);
  });

  it('tokens and private keys never reach a log line', async () => {
    const token = fakeJwt({ sub: 'secret-subject' });
    await create({ 'x-delegation': `bearer ${token}` });
    await f.app.inject({
      method: 'POST',
      url: `${base()}?action=new&type=jwt`,
      headers: { ...f.alice.h, 'x-delegation': `bearer ${token}.extra` },
    });
    const { id } = await delegated(f, f.alice);
    const keyText = await readFile(
      join(f.keyDir, (await readdir(f.keyDir)).find((n) => n.startsWith(id)) as string),
      'utf8',
    );
    const keyBody = /-----BEGIN RSA PRIVATE KEY-----\n([^\n]+)/.exec(keyText)?.[1] as string;
    const all = f.logs.join('');
    assert.ok(f.logs.length > 5, 'the service did log');
    assert.ok(!all.includes(token.split('.')[1] as string), 'no token in the logs');
    assert.ok(!all.includes(keyBody), 'no key in the logs');
    assert.doesNotMatch(all, /PRIVATE KEY/);
  });
});
