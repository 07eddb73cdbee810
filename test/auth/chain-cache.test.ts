import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VerifiedChainCache, chainKey } from '../../src/auth/chain-cache.js';
import { authenticateChain } from '../../src/auth/authenticate-chain.js';
import type { X509Identity } from '../../src/auth/identity.js';
import { trustStoreFromPems, type TrustStore } from '../../src/pki/trust-store.js';
import { ders, hoursAgo, makeCa, makeProxy, makeUser, type TestCred } from '../helpers/pki.js';

const ident = (dn: string, notAfter: number): X509Identity => ({
  kind: 'x509',
  dn,
  owner: dn,
  issuerDn: '/CN=CA',
  isProxy: false,
  proxyDepth: 0,
  limited: false,
  notAfter: new Date(notAfter),
  leafFingerprint: dn,
});

describe('VerifiedChainCache', () => {
  it('evicts the least recently used entry beyond its bound', () => {
    const c = new VerifiedChainCache(2);
    const later = Date.now() + 3_600_000;
    c.set('a', ident('/CN=a', later));
    c.set('b', ident('/CN=b', later));
    assert.equal(c.get('a')?.dn, '/CN=a'); // a is now the most recent
    c.set('c', ident('/CN=c', later));
    assert.equal(c.size, 2);
    assert.equal(c.get('b'), undefined);
    assert.equal(c.get('a')?.dn, '/CN=a');
    assert.equal(c.get('c')?.dn, '/CN=c');
  });

  it('never returns an entry at or after its notAfter, and drops it', () => {
    const c = new VerifiedChainCache();
    const t = Date.now();
    c.set('k', ident('/CN=k', t + 1000));
    assert.equal(c.get('k', t + 999)?.dn, '/CN=k');
    assert.equal(c.get('k', t + 1000), undefined);
    assert.equal(c.size, 0);
  });

  it('keys chains by all their fingerprints in order', () => {
    assert.notEqual(chainKey(['a', 'b']), chainKey(['b', 'a']));
    assert.notEqual(chainKey(['a', 'b']), chainKey(['a']));
  });
});

describe('authenticateChain', () => {
  let ca: TestCred;
  let user: TestCred;
  let trust: TrustStore;
  before(async () => {
    ca = await makeCa();
    user = await makeUser(ca);
    trust = trustStoreFromPems([ca.pem]);
  });
  const present = (...creds: TestCred[]): { ders: Buffer[]; fingerprints: string[] } => ({
    ders: ders(...creds),
    fingerprints: creds.map((c) => c.cert.fingerprint256),
  });

  it('maps an empty chain to missing credentials and a refusal to an invalid certificate', async () => {
    assert.deepEqual(authenticateChain(present(), trust, undefined), {
      ok: false,
      code: 'CE_ERR_AUTH_NO_CREDENTIALS',
      reason: 'no client certificate was presented',
    });
    const other = await makeUser(await makeCa({ dn: '/CN=Other' }));
    const r = authenticateChain(present(other), trust, undefined);
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.code, 'CE_ERR_AUTH_CERT_INVALID');
  });

  it('caches successes only, and serves them from the cache', async () => {
    const cache = new VerifiedChainCache();
    const proxy = await makeProxy(user);
    const first = authenticateChain(present(proxy, user), trust, cache);
    assert.ok(first.ok);
    assert.equal(cache.size, 1);
    // Served from the cache: the same identity object.
    const again = authenticateChain(present(proxy, user), trust, cache);
    assert.ok(again.ok && again.identity === first.identity);
    // Not for another store (a CA directory that changed): one that trusts nothing refuses, and the
    // cache is emptied, so the chain is verified again with the first store too.
    assert.equal(authenticateChain(present(proxy, user), trustStoreFromPems([]), cache).ok, false);
    assert.equal(cache.size, 0);
    const third = authenticateChain(present(proxy, user), trust, cache);
    assert.ok(third.ok && third.identity !== first.identity);
    // Another proxy of the same user is another chain.
    assert.ok(authenticateChain(present(await makeProxy(user), user), trust, cache).ok);
    assert.equal(cache.size, 2);
    const expired = await makeProxy(user, { notBefore: hoursAgo(3), notAfter: hoursAgo(1) });
    assert.equal(authenticateChain(present(expired, user), trust, cache).ok, false);
    assert.equal(cache.size, 2);
  });

  it('re-verifies a cached chain once it has expired', async () => {
    const cache = new VerifiedChainCache();
    const proxy = await makeProxy(user);
    assert.ok(authenticateChain(present(proxy, user), trust, cache).ok);
    const after = authenticateChain(present(proxy, user), trust, cache, proxy.cert.notAfter.getTime() + 1);
    assert.ok(!after.ok && /expired/.test(after.reason));
  });
});
