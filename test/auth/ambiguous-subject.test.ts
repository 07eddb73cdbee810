// The chain verifier refuses an end-entity subject whose one-line form reads back as
// another name, alone or under proxies, and gives every accepted identity its RFC 4514
// owner key beside the one-line DN.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { verifyClientChain } from '../../src/auth/x509-chain.js';
import { authenticateChain } from '../../src/auth/authenticate-chain.js';
import { encodeName, type DnPart } from '../../src/pki/dn.js';
import { trustStoreFromPems, type TrustStore } from '../../src/pki/trust-store.js';
import { ders, makeCa, makeProxy, makeUser, type TestCred } from '../helpers/pki.js';

const name = (...p: [string, string][]): Buffer => encodeName(p.map(([type, value]): DnPart => ({ type, value })));

let ca: TestCred;
let trust: TrustStore;
before(async () => {
  ca = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Test CA' });
  trust = trustStoreFromPems([ca.pem]);
});

describe('an ambiguous end-entity subject', () => {
  it("is refused when a value holds '/' and attr=, with the one-line form in the reason", async () => {
    const mallory = await makeUser(ca, { dn: name(['DC', 'org/DC=ceres-test'], ['CN', 'Jane Doe']) });
    const r = verifyClientChain(ders(mallory), trust);
    assert.ok(!r.ok);
    assert.equal(r.kind, 'ambiguous-subject');
    assert.match(
      r.reason,
      /ambiguous in one-line form \(\/DC=org\/DC=ceres-test\/CN=Jane Doe also reads as another name\)/,
    );
  });

  it('is refused under a proxy too (the identity is the end-entity subject)', async () => {
    const mallory = await makeUser(ca, { dn: name(['DC', 'org'], ['CN', 'Jane+UID=jd']) });
    const r = verifyClientChain(ders(await makeProxy(mallory), mallory), trust);
    assert.ok(!r.ok);
    assert.equal(r.kind, 'ambiguous-subject');
    assert.match(r.reason, /user certificate/);
  });

  it('becomes a 401 of its own code, not the generic one', async () => {
    const mallory = await makeUser(ca, { dn: name(['CN', 'a\\x41']) });
    const r = authenticateChain({ ders: ders(mallory), fingerprints: [mallory.cert.fingerprint256] }, trust, undefined);
    assert.ok(!r.ok);
    assert.equal(r.code, 'CE_ERR_AUTH_SUBJECT_AMBIGUOUS');
  });
});

describe('an unambiguous subject', () => {
  it("with a '/' not followed by attr= is accepted, with its RFC 4514 owner key", async () => {
    const host = await makeUser(ca, { dn: name(['DC', 'org'], ['CN', 'host/name.cern.ch']) });
    const r = verifyClientChain(ders(await makeProxy(host), host), trust);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(r.identity.dn, '/DC=org/CN=host/name.cern.ch');
    assert.equal(r.identity.owner, 'CN=host/name.cern.ch,DC=org');
  });
});
