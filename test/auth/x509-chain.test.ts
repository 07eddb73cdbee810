import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { x509 } from '../../src/pki/x509-lib.js';
import { verifyClientChain, type ChainResult, type RefusalKind } from '../../src/auth/x509-chain.js';
import { trustStoreFromPems, type TrustStore } from '../../src/pki/trust-store.js';
import { signProxyFromCsr } from '../../src/pki/issue.js';
import { pemBlocks } from '../../src/pki/certificate.js';
import { ders, hoursAgo, hoursFromNow, makeCa, makeProxy, makeUser, newKeys, type TestCred } from '../helpers/pki.js';

const KU = x509.KeyUsageFlags;

function accepted(r: ChainResult): Extract<ChainResult, { ok: true }> {
  assert.ok(r.ok, r.ok ? '' : `refused (${r.kind}): ${r.reason}`);
  return r;
}

function refused(r: ChainResult, kind: RefusalKind, reason: RegExp): void {
  assert.ok(!r.ok, 'expected a refusal');
  assert.equal(r.kind, kind, r.reason);
  assert.match(r.reason, reason);
  // Reasons are shown to clients and logged: names and dates only, never key material.
  assert.doesNotMatch(r.reason, /-----BEGIN|[A-Za-z0-9+/=]{48,}/);
}

let ca: TestCred;
let trust: TrustStore;
let user: TestCred;
let proxy: TestCred;

before(async () => {
  ca = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Test CA' });
  trust = trustStoreFromPems([ca.pem]);
  user = await makeUser(ca, { dn: '/DC=org/DC=ceres-test/CN=Jane Doe' });
  proxy = await makeProxy(user);
});

describe('accepted chains', () => {
  it('a user certificate alone: identity is its subject in one-line form', () => {
    const { identity } = accepted(verifyClientChain(ders(user), trust));
    assert.equal(identity.kind, 'x509');
    assert.equal(identity.dn, '/DC=org/DC=ceres-test/CN=Jane Doe');
    assert.equal(identity.issuerDn, '/DC=org/DC=ceres-test/CN=Test CA');
    assert.equal(identity.isProxy, false);
    assert.equal(identity.proxyDepth, 0);
    assert.equal(identity.limited, false);
    assert.equal(identity.leafFingerprint, user.cert.fingerprint256);
    assert.equal(identity.notAfter.getTime(), Math.min(user.cert.notAfter.getTime(), ca.cert.notAfter.getTime()));
  });

  it('a user certificate followed by the trusted CA itself', () => {
    accepted(verifyClientChain(ders(user, ca), trust));
  });

  it("an RFC 3820 proxy: identity is the end-entity DN without proxy CNs, expiry the proxy's", () => {
    const { identity } = accepted(verifyClientChain(ders(proxy, user), trust));
    assert.equal(identity.dn, '/DC=org/DC=ceres-test/CN=Jane Doe');
    assert.equal(identity.isProxy, true);
    assert.equal(identity.proxyDepth, 1);
    assert.equal(identity.leafFingerprint, proxy.cert.fingerprint256);
    assert.equal(identity.notAfter.getTime(), proxy.cert.notAfter.getTime());
  });

  it('a proxy of a proxy, with the CA at the end', async () => {
    const p2 = await makeProxy(proxy);
    const { identity } = accepted(verifyClientChain(ders(p2, proxy, user, ca), trust));
    assert.equal(identity.dn, user.cert.subjectOneline);
    assert.equal(identity.proxyDepth, 2);
  });

  it('a user under an intermediate CA that the client presents', async () => {
    const inter = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Intermediate', issuer: ca });
    const u = await makeUser(inter, { dn: '/DC=org/DC=ceres-test/CN=Inter User' });
    const p = await makeProxy(u);
    const { identity } = accepted(verifyClientChain(ders(p, u, inter), trust));
    assert.equal(identity.dn, '/DC=org/DC=ceres-test/CN=Inter User');
    assert.equal(identity.issuerDn, '/DC=org/DC=ceres-test/CN=Intermediate');
    // An intermediate in the CA directory is a trust anchor on its own.
    accepted(verifyClientChain(ders(u), trustStoreFromPems([inter.pem])));
  });

  it('a limited proxy, and any proxy below one, is flagged limited', async () => {
    const lim = await makeProxy(user, { policy: 'limited' });
    assert.equal(accepted(verifyClientChain(ders(lim, user), trust)).identity.limited, true);
    const below = await makeProxy(lim);
    assert.equal(accepted(verifyClientChain(ders(below, lim, user), trust)).identity.limited, true);
  });

  it('legacy Globus proxies (CN=proxy, CN=limited proxy) are recognised', async () => {
    const gt2 = await makeProxy(user, { legacy: 'proxy' });
    const r = accepted(verifyClientChain(ders(gt2, user), trust));
    assert.equal(r.identity.dn, user.cert.subjectOneline);
    assert.equal(r.identity.isProxy, true);
    assert.equal(r.identity.limited, false);
    const gt2l = await makeProxy(user, { legacy: 'limited proxy' });
    assert.equal(accepted(verifyClientChain(ders(gt2l, user), trust)).identity.limited, true);
  });

  it('a proxy within its path length constraint', async () => {
    const p1 = await makeProxy(user, { pathLen: 1 });
    const p2 = await makeProxy(p1);
    accepted(verifyClientChain(ders(p2, p1, user), trust));
  });

  it('an RSA proxy signed from a CSR the way the ARC client does', async () => {
    const rsaUser = await makeUser(ca, { dn: '/DC=org/DC=ceres-test/CN=RSA User', rsa: true });
    const keys = await newKeys(true);
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      keys,
      signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    });
    const signed = await signProxyFromCsr(csr.toString('pem'), rsaUser.pem, rsaUser.keyPem, { lifetimeSeconds: 3600 });
    const chain = pemBlocks(signed.chainPem);
    assert.equal(chain.length, 2);
    const { identity } = accepted(verifyClientChain(chain, trust));
    assert.equal(identity.dn, '/DC=org/DC=ceres-test/CN=RSA User');
    assert.ok(Math.abs(identity.notAfter.getTime() - (Date.now() + 3600_000)) < 120_000);
  });
});

describe('refused chains', () => {
  it('no certificate', () => {
    refused(verifyClientChain([], trust), 'no-certificate', /no client certificate/);
  });

  it('bytes that are not a certificate', () => {
    refused(verifyClientChain([Buffer.from('30030201', 'hex')], trust), 'malformed', /cannot be parsed/);
    refused(verifyClientChain([user.der.subarray(0, 100)], trust), 'malformed', /certificate 0/);
  });

  it('an absurdly long chain', () => {
    refused(
      verifyClientChain(
        Array.from({ length: 17 }, () => user.der),
        trust,
      ),
      'malformed',
      /longer than 16/,
    );
  });

  it('an expired user certificate', async () => {
    const u = await makeUser(ca, { notBefore: hoursAgo(48), notAfter: hoursAgo(1) });
    refused(verifyClientChain(ders(u), trust), 'expired', /client certificate .*CN=Test User expired at \d{4}-/);
  });

  it('a user certificate that is not yet valid', async () => {
    const u = await makeUser(ca, { notBefore: hoursFromNow(2), notAfter: hoursFromNow(48) });
    refused(verifyClientChain(ders(u), trust), 'not-yet-valid', /is not valid before/);
  });

  it('an expired proxy', async () => {
    const p = await makeProxy(user, { notBefore: hoursAgo(13), notAfter: hoursAgo(1) });
    refused(verifyClientChain(ders(p, user), trust), 'expired', /the proxy certificate expired/);
  });

  it('a proxy that is not yet valid', async () => {
    const p = await makeProxy(user, { notBefore: hoursFromNow(1), notAfter: hoursFromNow(12) });
    refused(verifyClientChain(ders(p, user), trust), 'not-yet-valid', /the proxy certificate is not valid before/);
  });

  it('a valid proxy of an expired user certificate', async () => {
    const u = await makeUser(ca, { notBefore: hoursAgo(48), notAfter: hoursAgo(1) });
    const p = await makeProxy(u, { notBefore: hoursAgo(2), notAfter: hoursFromNow(10) });
    refused(verifyClientChain(ders(p, u), trust), 'expired', /user certificate .* expired/);
  });

  it('a certificate under an expired CA', async () => {
    const old = await makeCa({ dn: '/O=Old/CN=Expired CA', notBefore: hoursAgo(100), notAfter: hoursAgo(1) });
    const u = await makeUser(old, { notBefore: hoursAgo(50), notAfter: hoursFromNow(50) });
    refused(
      verifyClientChain(ders(u), trustStoreFromPems([old.pem])),
      'expired',
      /trusted CA \/O=Old\/CN=Expired CA expired/,
    );
  });

  it('a certificate from an unknown CA', async () => {
    const other = await makeCa({ dn: '/O=Elsewhere/CN=Other CA' });
    const u = await makeUser(other);
    refused(
      verifyClientChain(ders(u), trust),
      'unknown-ca',
      /issued by \/O=Elsewhere\/CN=Other CA, which is not a trusted CA/,
    );
    refused(
      verifyClientChain(ders(u, other), trust),
      'unknown-ca',
      /chain ends at the CA certificate \/O=Elsewhere\/CN=Other CA, which is not trusted/,
    );
    refused(verifyClientChain(ders(await makeProxy(u), u), trust), 'unknown-ca', /not a trusted CA/);
  });

  it('a CA impostor: same name as the trusted CA, other key', async () => {
    const fake = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Test CA' });
    const u = await makeUser(fake, { dn: '/DC=org/DC=ceres-test/CN=Jane Doe' });
    refused(verifyClientChain(ders(u), trust), 'unknown-ca', /is not signed by the trusted CA/);
    refused(verifyClientChain(ders(u, fake), trust), 'unknown-ca', /not trusted/);
  });

  it('a broken chain: intermediate CA missing', async () => {
    const inter = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Intermediate', issuer: ca });
    const u = await makeUser(inter);
    refused(
      verifyClientChain(ders(u), trust),
      'unknown-ca',
      /issued by \/DC=org\/DC=ceres-test\/CN=Intermediate, which is not a trusted CA and was not presented/,
    );
  });

  it('a broken chain: the middle proxy missing', async () => {
    const p2 = await makeProxy(proxy);
    refused(verifyClientChain(ders(p2, user), trust), 'broken-chain', /not the issuer of the proxy certificate/);
  });

  it('a broken chain: a proxy without its issuer', () => {
    refused(
      verifyClientChain(ders(proxy), trust),
      'broken-chain',
      /issuer of the proxy certificate .*CN=Jane Doe\) was not presented/,
    );
  });

  it('a broken chain: wrong order', async () => {
    refused(verifyClientChain(ders(user, proxy), trust), 'broken-chain', /out of order or incomplete/);
    const p2 = await makeProxy(proxy);
    refused(verifyClientChain(ders(p2, user, proxy), trust), 'broken-chain', /out of order or incomplete/);
    refused(verifyClientChain(ders(ca, user), trust), 'not-allowed', /trusted CA itself/);
  });

  it('a broken chain: certificates after the trusted CA', async () => {
    const other = await makeCa({ dn: '/O=Elsewhere/CN=Other CA' });
    refused(verifyClientChain(ders(user, ca, other), trust), 'broken-chain', /follow the trusted CA/);
  });

  it("a proxy signed by a key other than its issuer's", async () => {
    const stranger = await newKeys();
    const p = await makeProxy(user, { signWith: stranger.privateKey });
    refused(
      verifyClientChain(ders(p, user), trust),
      'bad-signature',
      /the proxy certificate is not signed by the key of its issuer \/DC=org\/DC=ceres-test\/CN=Jane Doe/,
    );
    // The same proxy signed by the user's CA key instead.
    const p2 = await makeProxy(user, { signWith: ca.keys.privateKey });
    refused(verifyClientChain(ders(p2, user), trust), 'bad-signature', /not signed by the key of its issuer/);
  });

  it('a user certificate whose signature does not verify with the presented CA', async () => {
    const forger = await newKeys();
    const u = await makeUser({ ...ca, keys: forger }, { dn: '/DC=org/DC=ceres-test/CN=Forged' });
    refused(verifyClientChain(ders(u, ca), trust), 'bad-signature', /does not verify with the key of/);
    refused(verifyClientChain(ders(u), trust), 'unknown-ca', /not signed by the trusted CA/);
  });

  it("a proxy whose subject does not extend its issuer's", async () => {
    const cases = [
      '/DC=org/DC=ceres-test/CN=Somebody Else/CN=12345',
      '/DC=org/DC=ceres-test/CN=Jane Doe/CN=1/CN=2',
      '/DC=org/DC=ceres-test/CN=Jane Doe/O=12345',
      '/DC=org/DC=ceres-test/CN=Jane Doe',
    ];
    for (const subject of cases) {
      const p = await makeProxy(user, { subject });
      refused(
        verifyClientChain(ders(p, user), trust),
        'bad-proxy',
        /does not extend its issuer's subject .* by one CN/,
      );
    }
  });

  it('a self-signed leaf', async () => {
    const self = await makeUser(undefined, { dn: '/DC=org/DC=ceres-test/CN=Jane Doe', selfSigned: true, ca: true });
    refused(verifyClientChain(ders(self), trust), 'self-signed', /is self-signed and not issued by a trusted CA/);
    const selfNotCa = await makeUser(undefined, { dn: '/CN=Lone', selfSigned: true });
    refused(verifyClientChain(ders(selfNotCa), trust), 'self-signed', /self-signed/);
    refused(
      verifyClientChain(ders(await makeProxy(selfNotCa), selfNotCa), trust),
      'self-signed',
      /user certificate \/CN=Lone is self-signed/,
    );
  });

  it('a proxy with a non-critical proxyCertInfo', async () => {
    const p = await makeProxy(user, { critical: false });
    refused(verifyClientChain(ders(p, user), trust), 'bad-proxy', /proxyCertInfo extension .* is not critical/);
  });

  it('a proxy that claims to be a CA or carries alternative names', async () => {
    refused(
      verifyClientChain(ders(await makeProxy(user, { ca: true }), user), trust),
      'bad-proxy',
      /claims to be a CA/,
    );
    refused(
      verifyClientChain(ders(await makeProxy(user, { withSan: true }), user), trust),
      'bad-proxy',
      /alternative names/,
    );
  });

  it('independent proxies and unknown proxy policy languages', async () => {
    refused(
      verifyClientChain(ders(await makeProxy(user, { policy: 'independent' }), user), trust),
      'not-allowed',
      /independent proxy/,
    );
    refused(
      verifyClientChain(ders(await makeProxy(user, { policy: '1.2.3.4.5' }), user), trust),
      'not-allowed',
      /unsupported proxy policy language 1\.2\.3\.4\.5/,
    );
  });

  it('a proxy beyond the path length constraint of the proxy above it', async () => {
    const p1 = await makeProxy(user, { pathLen: 0 });
    const p2 = await makeProxy(p1);
    refused(verifyClientChain(ders(p2, p1, user), trust), 'bad-proxy', /allows 0 further proxies but 1 follow/);
  });

  it('a pre-RFC (draft) proxy', async () => {
    refused(verifyClientChain(ders(await makeProxy(user, { draft: true }), user), trust), 'bad-proxy', /draft\) proxy/);
  });

  it('a proxy signed by a certificate whose key usage forbids signatures', async () => {
    const u = await makeUser(ca, { keyUsage: KU.keyEncipherment });
    refused(verifyClientChain(ders(await makeProxy(u), u), trust), 'bad-proxy', /does not allow it to sign proxies/);
    refused(verifyClientChain(ders(u), trust), 'not-allowed', /does not allow digital signatures/);
  });

  it('end-entity certificates not meant for clients', async () => {
    refused(verifyClientChain(ders(await makeUser(ca, { ca: true })), trust), 'not-allowed', /is a CA certificate/);
    refused(
      verifyClientChain(ders(await makeUser(ca, { eku: [x509.ExtendedKeyUsage.serverAuth] })), trust),
      'not-allowed',
      /not valid for TLS client authentication/,
    );
    accepted(
      verifyClientChain(
        ders(await makeUser(ca, { eku: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth] })),
        trust,
      ),
    );
  });

  it('an unknown critical extension', async () => {
    const u = await makeUser(ca, {
      extra: [new x509.Extension('1.3.6.1.4.1.99999.1', true, Buffer.from('0500', 'hex'))],
    });
    refused(
      verifyClientChain(ders(u), trust),
      'not-allowed',
      /unsupported critical extension 1\.3\.6\.1\.4\.1\.99999\.1/,
    );
  });

  it('CA constraints: a non-CA issuer, path length, missing keyCertSign', async () => {
    const notCa = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Not A CA', issuer: ca, notCa: true });
    refused(
      verifyClientChain(ders(await makeUser(notCa), notCa), trust),
      'broken-chain',
      /is not a CA certificate but appears as an issuer/,
    );

    const strictRoot = await makeCa({ dn: '/O=Strict/CN=Root', pathLen: 0 });
    const inter = await makeCa({ dn: '/O=Strict/CN=Inter', issuer: strictRoot });
    refused(
      verifyClientChain(ders(await makeUser(inter), inter), trustStoreFromPems([strictRoot.pem])),
      'not-allowed',
      /allows 0 intermediate CAs below it but the chain has 1/,
    );

    const noSign = await makeCa({ dn: '/O=NoSign/CN=Root', noCertSign: true });
    refused(
      verifyClientChain(ders(await makeUser(noSign)), trustStoreFromPems([noSign.pem])),
      'not-allowed',
      /does not allow signing certificates/,
    );
  });

  it('checks validity at the time given, not the wall clock', () => {
    const later = new Date(proxy.cert.notAfter.getTime() + 1000);
    refused(verifyClientChain(ders(proxy, user), trust, later), 'expired', /proxy certificate expired/);
    accepted(verifyClientChain(ders(proxy, user), trust, new Date(proxy.cert.notAfter.getTime() - 1000)));
  });
});
