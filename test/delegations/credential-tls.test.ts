// What data staging gets from credentialFor is a working TLS client credential: a
// storage endpoint that verifies client chains the way Ceres does (RFC 3820 proxies
// allowed) sees the delegating user; after a renewal it sees the new proxy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Agent, request } from 'undici';
import { x509 } from '../../src/pki/x509-lib.js';
import { readPeerChain } from '../../src/http/peer-chain.js';
import { verifyClientChain } from '../../src/auth/x509-chain.js';
import { makeUser } from '../helpers/pki.js';
import { base, makeFixture, signAs, testPki, type Fixture } from './fixture.js';

interface Seen {
  ok: boolean;
  dn?: string;
  leaf?: string;
  reason?: string;
}

describe('a delegated credential as a TLS client credential', () => {
  let f: Fixture;
  let server: https.Server;
  let port: number;
  before(async () => {
    f = await makeFixture();
    const pki = await testPki();
    const host = await makeUser(pki.ca, {
      dn: '/DC=org/DC=ceres-test/CN=localhost',
      eku: [x509.ExtendedKeyUsage.serverAuth],
    });
    server = https.createServer(
      { cert: host.pem, key: host.keyPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const chain = readPeerChain(req.socket as TLSSocket);
        const r = verifyClientChain(chain.ders, pki.trust);
        const seen: Seen = r.ok
          ? { ok: true, dn: r.identity.dn, leaf: r.identity.leafFingerprint }
          : { ok: false, reason: r.reason };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(seen));
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await f.close();
  });

  async function presentedBy(id: string): Promise<Seen> {
    const cred = await f.wiring.credentialFor(id, f.alice.owner);
    assert.equal(cred?.kind, 'x509');
    if (cred?.kind !== 'x509') throw new Error('no x509 credential');
    const agent = new Agent({ connect: { cert: cred.certChainPem, key: cred.keyPem, rejectUnauthorized: false } });
    try {
      const r = await request(`https://127.0.0.1:${port}/file`, { dispatcher: agent });
      return (await r.body.json()) as Seen;
    } finally {
      await agent.close();
    }
  }

  it('the endpoint sees the delegating user; after renew + PUT, the new proxy', async () => {
    const n = await f.app.inject({ method: 'POST', url: `${base()}?action=new`, headers: f.alice.h });
    const id = String(n.headers.location).split('/').pop() as string;
    assert.equal(
      (
        await f.app.inject({
          method: 'PUT',
          url: `${base()}/${id}`,
          headers: f.alice.h,
          payload: await signAs(f.alice, n.body),
        })
      ).statusCode,
      200,
    );
    const first = await presentedBy(id);
    assert.deepEqual({ ok: first.ok, dn: first.dn }, { ok: true, dn: f.alice.dn }, first.reason);

    const r = await f.app.inject({ method: 'POST', url: `${base()}/${id}?action=renew`, headers: f.alice.h });
    assert.equal(
      (
        await f.app.inject({
          method: 'PUT',
          url: `${base()}/${id}`,
          headers: f.alice.h,
          payload: await signAs(f.alice, r.body),
        })
      ).statusCode,
      200,
    );
    const second = await presentedBy(id);
    assert.equal(second.dn, f.alice.dn);
    assert.notEqual(second.leaf, first.leaf, 'the renewed proxy is presented');
  });
});
