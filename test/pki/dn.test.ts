import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TAG, encodeOid, encodeTlv } from '../../src/pki/der.js';
import {
  appendCn,
  canonicalEncoding,
  encodeName,
  encodeOnelineDn,
  onelineOf,
  parseName,
  parseOnelineDn,
  subjectHash,
} from '../../src/pki/dn.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { parseCertificate, toPem } from '../../src/pki/certificate.js';
import { newKeys, tempDir } from '../helpers/pki.js';

const dir = tempDir(after, 'ceres-dn-');
let n = 0;

/** Self-signed certificate with `subject`, and what the openssl CLI says about it. */
async function withOpenssl(
  subject: Uint8Array,
): Promise<{ oneline: string; hash: string; ours: { oneline: string; hash: string } }> {
  const keys = await newKeys();
  const der = await issueCertificate({
    subject,
    publicKey: keys.publicKey,
    selfSigningKey: keys.privateKey,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
  });
  const file = join(dir, `c${n++}.pem`);
  writeFileSync(file, toPem(der));
  const out = execFileSync('openssl', ['x509', '-in', file, '-noout', '-subject', '-nameopt', 'compat', '-hash'], {
    encoding: 'latin1',
  }).split('\n');
  const cert = parseCertificate(der);
  assert.deepEqual(
    Buffer.from(cert.subjectDer),
    Buffer.from(subject),
    'the certificate carries the subject bytes unchanged',
  );
  return {
    oneline: (out[0] ?? '').replace(/^subject=/, ''),
    hash: out[1] ?? '',
    ours: { oneline: onelineOf(cert.subjectDer), hash: subjectHash(cert.subjectDer) },
  };
}

const ava = (oid: string, tag: number, value: Buffer): Buffer =>
  encodeTlv(TAG.SEQUENCE, encodeOid(oid), encodeTlv(tag, value));
const rdn = (...avas: Buffer[]): Buffer => encodeTlv(TAG.SET, ...avas);
const name = (...rdns: Buffer[]): Buffer => encodeTlv(TAG.SEQUENCE, ...rdns);

describe('distinguished names agree with the openssl CLI', () => {
  const cases: Array<[string, () => Buffer]> = [
    ['plain ASCII with DC components (IA5String)', () => encodeOnelineDn('/DC=org/DC=ceres-test/O=Grid/CN=Jane Doe')],
    [
      'country as PrintableString and email',
      () => encodeOnelineDn('/C=NO/O=Uni Oslo/OU=Physics/CN=John Smith/emailAddress=john@example.org'),
    ],
    ['non-ASCII UTF-8 is escaped as \\xHH', () => encodeOnelineDn('/O=Grid/CN=Jürgen Ørsted')],
    [
      'case and white space differences (canonical hash)',
      () => encodeOnelineDn('/O=GRID  Example/CN=  Mixed   Case User '),
    ],
    [
      'multi-valued RDN',
      () =>
        name(
          rdn(ava('2.5.4.10', TAG.UTF8_STRING, Buffer.from('Grid'))),
          rdn(
            ava('2.5.4.3', TAG.UTF8_STRING, Buffer.from('Alice')),
            ava('0.9.2342.19200300.100.1.1', TAG.UTF8_STRING, Buffer.from('alice01')),
          ),
        ),
    ],
    [
      'BMPString and T61String values',
      () =>
        name(
          rdn(ava('2.5.4.10', TAG.BMP_STRING, Buffer.from('Grid Ü', 'utf16le').swap16())),
          rdn(ava('2.5.4.3', TAG.T61_STRING, Buffer.from('Caf\xe9 User', 'latin1'))),
        ),
    ],
    [
      'less common attribute types by their OpenSSL short names',
      () =>
        encodeOnelineDn(
          '/organizationIdentifier=VATNO-1/jurisdictionC=NO/generationQualifier=III/role=boss/dnQualifier=q/pseudonym=ps/street=st/postalCode=0150/description=d/businessCategory=b/name=n/initials=i/title=t/SN=sn/GN=gn/serialNumber=sn2/UID=u1/unstructuredName=un/CN=x',
        ),
    ],
    [
      'unknown attribute type (numeric OID)',
      () =>
        name(
          rdn(ava('1.2.3.4.5', TAG.UTF8_STRING, Buffer.from('x'))),
          rdn(ava('2.5.4.3', TAG.PRINTABLE_STRING, Buffer.from('Bob'))),
        ),
    ],
    [
      'proxy subject: issuer + CN=<serial>',
      () => appendCn(encodeOnelineDn('/DC=org/DC=ceres-test/CN=Jane Doe'), '123456789'),
    ],
  ];
  for (const [what, make] of cases) {
    it(what, async () => {
      const r = await withOpenssl(make());
      assert.equal(r.ours.oneline, r.oneline);
      assert.equal(r.ours.hash, r.hash);
    });
  }
});

describe('distinguished name helpers', () => {
  it('parses and re-encodes one-line DNs in order', () => {
    assert.deepEqual(parseOnelineDn('/O=Grid/OU=a b/CN=Jane'), [
      { type: 'O', value: 'Grid' },
      { type: 'OU', value: 'a b' },
      { type: 'CN', value: 'Jane' },
    ]);
    assert.equal(onelineOf(encodeOnelineDn('/O=Grid/OU=a b/CN=Jane')), '/O=Grid/OU=a b/CN=Jane');
    assert.equal(onelineOf(encodeName([{ type: 'CN', value: 'x/y' }])), '/CN=x/y');
  });

  it('refuses DNs it cannot encode faithfully', () => {
    assert.throws(() => parseOnelineDn('O=Grid'), /starts with \//);
    assert.throws(() => encodeOnelineDn('/XX=foo'), /unknown DN attribute type/);
    assert.throws(() => encodeOnelineDn('/C=Nörway'), /cannot hold/);
    assert.throws(() => encodeOnelineDn('/DC=ü'), /cannot hold/);
  });

  it('compares names canonically: case and white space do not matter, order and values do', () => {
    const a = canonicalEncoding(parseName(encodeOnelineDn('/O=Grid/CN=Jane  Doe')));
    assert.ok(a.equals(canonicalEncoding(parseName(encodeOnelineDn('/O=GRID/CN= jane doe ')))));
    assert.ok(!a.equals(canonicalEncoding(parseName(encodeOnelineDn('/CN=Jane Doe/O=Grid')))));
    assert.ok(!a.equals(canonicalEncoding(parseName(encodeOnelineDn('/O=Grid/CN=Jane Do')))));
  });

  it('appendCn keeps the issuer name bytes and adds exactly one RDN', () => {
    const issuer = name(rdn(ava('2.5.4.10', TAG.PRINTABLE_STRING, Buffer.from('Grid'))));
    const proxy = appendCn(issuer, '42');
    const rdns = parseName(proxy);
    assert.equal(rdns.length, 2);
    assert.equal(rdns[0]?.[0]?.tag, TAG.PRINTABLE_STRING);
    assert.equal(onelineOf(proxy), '/O=Grid/CN=42');
  });
});
