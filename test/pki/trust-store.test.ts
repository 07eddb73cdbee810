import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTrustStore, trustStoreFromPems } from '../../src/pki/trust-store.js';
import { PkiError } from '../../src/pki/pki-error.js';
import { caDirEntry } from '../../src/pki/ca-dir.js';
import { parseCertificate, pemBlocks } from '../../src/pki/certificate.js';
import { makeCa, makeUser, tempDir, type TestCred } from '../helpers/pki.js';

const root = tempDir(after, 'ceres-trust-');
let n = 0;
const newDir = (): string => {
  const d = join(root, `d${n++}`);
  mkdirSync(d);
  return d;
};

describe('loadTrustStore', () => {
  let caA: TestCred;
  let caB: TestCred;
  let user: TestCred;
  before(async () => {
    caA = await makeCa({ dn: '/DC=org/DC=test/CN=CA A' });
    caB = await makeCa({ dn: '/DC=org/DC=test/CN=CA B' });
    user = await makeUser(caA);
  });

  it('loads hashed names and *.pem, ignores companions other than CRLs, and de-duplicates aliases', () => {
    const d = newDir();
    const a = caDirEntry(caA.der);
    writeFileSync(join(d, 'ca-a.pem'), caA.pem);
    symlinkSync('ca-a.pem', join(d, a.certFile)); // the usual IGTF layout: alias + hash link
    writeFileSync(join(d, a.signingPolicyFile), a.signingPolicy);
    writeFileSync(join(d, `${a.hash}.namespaces`), 'TO Issuer "x" PERMIT Subject ".*"\n');
    // A CRL is read (src/pki/revocation.ts); a broken one is a problem, not a failure.
    writeFileSync(join(d, `${a.hash}.r0`), '-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n');
    writeFileSync(join(d, 'README'), 'not a certificate');
    const b = caDirEntry(caB.der);
    writeFileSync(join(d, b.certFile.replace(/\.0$/, '.1')), caB.pem);
    const store = loadTrustStore(d);
    assert.equal(store.anchors.length, 2);
    assert.deepEqual(
      store.problems.map((p) => p.file),
      [`${a.hash}.r0`],
    );
    assert.ok(store.isAnchor(caA.cert) && store.isAnchor(caB.cert));
    assert.ok(!store.isAnchor(user.cert));
    assert.equal(store.candidates(user.cert.issuer)[0]?.fingerprint256, caA.cert.fingerprint256);
    assert.equal(store.candidates(caB.cert.subject).length, 1);
    assert.equal(store.candidates(user.cert.subject).length, 0);
    assert.equal(store.pems.length, 2);
    assert.ok(pemBlocks(store.pems.join('')).some((der) => der.equals(caA.der)));
  });

  it('reports invalid, non-CA and unreadable files by name and keeps the good ones', () => {
    const d = newDir();
    writeFileSync(join(d, 'good.pem'), caA.pem);
    writeFileSync(join(d, '0badbad0.0'), '-----BEGIN CERTIFICATE-----\nMIIBAAAA\n-----END CERTIFICATE-----\n');
    writeFileSync(join(d, 'user.pem'), user.pem);
    writeFileSync(join(d, 'empty.pem'), 'nothing here');
    symlinkSync('does-not-exist.pem', join(d, '12345678.0'));
    const store = loadTrustStore(d);
    assert.equal(store.anchors.length, 1);
    const byFile = Object.fromEntries(store.problems.map((p) => [p.file, p.reason]));
    assert.match(byFile['0badbad0.0'] ?? '', /not a valid certificate/);
    assert.match(byFile['user.pem'] ?? '', /is not a CA certificate/);
    assert.match(byFile['empty.pem'] ?? '', /no PEM certificate/);
    assert.match(byFile['12345678.0'] ?? '', /unreadable \(ENOENT\)/);
    assert.equal(store.problems.length, 4);
  });

  it('fails clearly on a missing directory or one without any usable CA', () => {
    assert.throws(
      () => loadTrustStore(join(root, 'nope')),
      (e: unknown) => e instanceof PkiError && /cannot read CA directory .*ENOENT/.test(e.message),
    );
    const d = newDir();
    writeFileSync(join(d, 'user.pem'), user.pem);
    assert.throws(
      () => loadTrustStore(d),
      (e: unknown) => e instanceof PkiError && /no usable CA certificate.*user\.pem \(.*not a CA/.test(e.message),
    );
    assert.equal(loadTrustStore(d, { allowEmpty: true }).anchors.length, 0);
  });

  it('accepts an old version 1 self-signed root but not a version 1 leaf', () => {
    const d = newDir();
    const key = join(d, 'k.key');
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key], {
      stdio: 'ignore',
    });
    execFileSync('openssl', ['req', '-new', '-key', key, '-subj', '/O=Old/CN=V1 Root', '-out', join(d, 'r.csr')], {
      stdio: 'ignore',
    });
    execFileSync(
      'openssl',
      ['x509', '-req', '-in', join(d, 'r.csr'), '-signkey', key, '-days', '10', '-out', join(d, 'v1root.pem')],
      { stdio: 'ignore' },
    );
    assert.equal(parseCertificate(pemBlocks(readFileSync(join(d, 'v1root.pem'), 'utf8'))[0] as Buffer).version, 1);
    execFileSync('openssl', ['req', '-new', '-key', key, '-subj', '/O=Old/CN=V1 Leaf', '-out', join(d, 'l.csr')], {
      stdio: 'ignore',
    });
    execFileSync(
      'openssl',
      [
        'x509',
        '-req',
        '-in',
        join(d, 'l.csr'),
        '-CA',
        join(d, 'v1root.pem'),
        '-CAkey',
        key,
        '-set_serial',
        '7',
        '-days',
        '5',
        '-out',
        join(d, 'v1leaf.crt'),
      ],
      { stdio: 'ignore' },
    );
    writeFileSync(join(d, 'v1leaf.pem'), readFileSync(join(d, 'v1leaf.crt')));
    const store = loadTrustStore(d);
    assert.equal(store.anchors.length, 1);
    assert.equal(store.anchors[0]?.subjectOneline, '/O=Old/CN=V1 Root');
    assert.match(store.problems[0]?.reason ?? '', /V1 Leaf is not a CA/);
  });

  it('builds a store from PEM texts (bundles allowed)', () => {
    const s = trustStoreFromPems([caA.pem + caB.pem]);
    assert.equal(s.anchors.length, 2);
    assert.equal(trustStoreFromPems(['junk']).problems.length, 1);
  });
});
