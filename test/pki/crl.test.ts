/**
 * CRL files and the CA directory's CRL set: parsing (PEM, DER, refusals), how often the
 * directory is looked at, what a broken file does.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { caDirEntry } from '../../src/pki/ca-dir.js';
import { toPem } from '../../src/pki/certificate.js';
import { parseCrlFile } from '../../src/pki/crl.js';
import { DerError } from '../../src/pki/der.js';
import { CrlDirectory } from '../../src/pki/revocation.js';
import { loadTrustStore } from '../../src/pki/trust-store.js';
import { x509 } from '../../src/pki/x509-lib.js';
import { makeCa, makeCrl, makeUser, tempDir } from '../helpers/pki.js';

const dir = tempDir(after, 'ceres-crl-unit-');

describe('CRL files', () => {
  it("PEM and DER read the same; serials match the certificates' spelling", async () => {
    const ca = await makeCa();
    const users = await Promise.all([makeUser(ca), makeUser(ca)]);
    const der = await makeCrl(ca, users);
    const a = parseCrlFile(der);
    const b = parseCrlFile(Buffer.from(`junk before\n${toPem(der, 'X509 CRL')}`));
    assert.deepEqual([...a.revoked.keys()].sort(), users.map((u) => u.cert.serialHex).sort());
    assert.deepEqual([...b.revoked.keys()], [...a.revoked.keys()]);
    assert.equal(a.issuerOneline, ca.cert.subjectOneline);
    assert.ok(a.nextUpdate !== undefined && a.nextUpdate > a.thisUpdate);
    assert.equal(a.signedBy(ca.cert.node.publicKey), true);
    assert.equal(a.signedBy(users[0]?.cert.node.publicKey), false);
  });

  it('refuses what it cannot use: garbage, truncation, two CRLs in one file, a delta CRL, an unknown critical extension', async () => {
    const ca = await makeCa();
    const der = await makeCrl(ca, []);
    const signed = async (extensions: x509.Extension[]) =>
      Buffer.from(
        (
          await x509.X509CrlGenerator.create({
            issuer: new x509.X509Certificate(ca.der).subjectName,
            thisUpdate: new Date(),
            extensions,
            signingKey: ca.keys.privateKey,
            signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
          })
        ).rawData,
      );
    const delta = await signed([new x509.Extension('2.5.29.27', true, new Uint8Array([0x02, 0x01, 0x01]))]);
    const critical = await signed([new x509.Extension('1.2.3.4', true, new Uint8Array([0x05, 0x00]))]);
    for (const [bytes, why] of [
      [Buffer.from('not a CRL at all'), /./],
      [der.subarray(0, der.length - 10), /./],
      [Buffer.from(toPem(der, 'X509 CRL') + toPem(der, 'X509 CRL')), /more than one CRL/],
      [Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), /no X509 CRL PEM block/],
      [delta, /delta CRL/],
      [critical, /unsupported critical extension 1\.2\.3\.4/],
    ] as const) {
      assert.throws(
        () => parseCrlFile(bytes),
        (e: unknown) => e instanceof DerError && why.test(e.message),
      );
    }
    assert.equal(parseCrlFile(await signed([])).nextUpdate, undefined, 'nextUpdate is optional');
  });
});

describe('the CRL set of a CA directory', () => {
  it('is looked at again at most every recheckMs; a change bumps the generation', async () => {
    const ca = await makeCa();
    const user = await makeUser(ca);
    const d = join(dir, 'interval');
    const e = caDirEntry(ca.der);
    mkdirSync(d);
    writeFileSync(join(d, e.certFile), e.certPem);
    writeFileSync(join(d, e.crlFile), await makeCrl(ca, []));
    const crls = new CrlDirectory(d, 1000);
    const g0 = crls.refresh(10_000);
    assert.equal(crls.count, 1);
    assert.equal(crls.status(user.cert, ca.cert, Date.now()), undefined);
    writeFileSync(join(d, e.crlFile), await makeCrl(ca, [user]));
    assert.equal(crls.refresh(10_999), g0, 'not looked at before the interval');
    assert.equal(crls.status(user.cert, ca.cert, Date.now()), undefined);
    const g1 = crls.refresh(11_000);
    assert.notEqual(g1, g0);
    assert.equal(crls.status(user.cert, ca.cert, Date.now())?.state, 'revoked');
    assert.equal(crls.refresh(12_000), g1, 'nothing changed: same generation');
    // A garbage companion file is reported and changes nothing else.
    writeFileSync(join(d, `${e.hash}.r1`), 'garbage');
    assert.equal(crls.refresh(13_000), g1);
    assert.deepEqual(
      crls.problems.map((p) => p.file),
      [`${e.hash}.r1`],
    );
    assert.equal(crls.status(user.cert, ca.cert, Date.now())?.state, 'revoked');
  });

  it('loadTrustStore reports unusable CRL files among its problems and still loads', async () => {
    const ca = await makeCa();
    const d = join(dir, 'problems');
    mkdirSync(d);
    const e = caDirEntry(ca.der);
    writeFileSync(join(d, e.certFile), e.certPem);
    writeFileSync(join(d, e.crlFile), 'not a crl');
    const trust = loadTrustStore(d);
    assert.equal(trust.anchors.length, 1);
    assert.deepEqual(
      trust.problems.map((p) => p.file),
      [e.crlFile],
    );
  });
});
