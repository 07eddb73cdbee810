// The owner key (RFC 4514 form) and the ambiguity of the one-line form, on names built
// as a CA would encode them: single- and multi-valued RDNs, values with `/`, `+`, `,`,
// backslashes, non-ASCII bytes and string types other than UTF8String.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TAG, encodeOid, encodeTlv } from '../../src/pki/der.js';
import { parseName, toOneline, type Rdn } from '../../src/pki/dn.js';
import { onelineIsAmbiguous, rfc4514Of, rfc4514OfOneline } from '../../src/pki/rfc4514.js';

const OIDS: Record<string, string> = { O: '2.5.4.10', OU: '2.5.4.11', CN: '2.5.4.3', UID: '0.9.2342.19200300.100.1.1' };
type Value = string | { readonly tag: number; readonly bytes: Buffer };
/** A DER name from RDNs, each a list of [type, value] (value text as UTF8String, or tag and bytes). */
function name(...rdns: (readonly (readonly [string, Value])[])[]): Rdn[] {
  const set = (avas: readonly (readonly [string, Value])[]) =>
    encodeTlv(
      TAG.SET,
      ...avas.map(([t, v]) =>
        encodeTlv(
          TAG.SEQUENCE,
          encodeOid(OIDS[t] ?? t),
          typeof v === 'string' ? encodeTlv(TAG.UTF8_STRING, Buffer.from(v)) : encodeTlv(v.tag, v.bytes),
        ),
      ),
    );
  return parseName(encodeTlv(TAG.SEQUENCE, ...rdns.map(set)));
}
const one = (t: string, v: Value): (readonly [string, Value])[] => [[t, v]];

describe('the RFC 4514 form of a subject', () => {
  it('writes the RDNs last to first, escapes the specials, and multi-valued RDNs with +', () => {
    assert.equal(
      rfc4514Of(name(one('O', 'Grid'), one('OU', 'Dev'), one('CN', 'Jane Doe'))),
      'CN=Jane Doe,OU=Dev,O=Grid',
    );
    assert.equal(rfc4514Of(name(one('CN', 'a,b+c"d\\e;f<g>h'))), 'CN=a\\,b\\+c\\"d\\\\e\\;f\\<g\\>h');
    assert.equal(rfc4514Of(name(one('CN', ' #x '))), 'CN=\\ #x\\ ');
    assert.equal(rfc4514Of(name(one('CN', '#x'))), 'CN=\\#x');
    assert.equal(
      rfc4514Of(
        name([
          ['CN', 'a'],
          ['UID', 'b'],
        ]),
      ),
      'CN=a+UID=b',
    );
    assert.equal(rfc4514Of(name(one('CN', 'Jérôme\n'))), 'CN=J\\C3\\A9r\\C3\\B4me\\0A');
    assert.equal(rfc4514Of(name(one('2.5.4.99', 'x'))), '2.5.4.99=x');
    assert.equal(rfc4514Of([]), '');
  });

  it('tells apart the subjects whose one-line forms are byte-equal', () => {
    const pairs: [Rdn[], Rdn[]][] = [
      [
        name(one('O', 'Ceres Development/OU=x'), one('CN', 'alice')),
        name(one('O', 'Ceres Development'), one('OU', 'x'), one('CN', 'alice')),
      ],
      [
        name(one('CN', 'a+UID=b')),
        name([
          ['CN', 'a'],
          ['UID', 'b'],
        ]),
      ],
      [name(one('CN', 'a\\xC3\\xA9')), name(one('CN', 'aé'))],
    ];
    for (const [a, b] of pairs) {
      assert.equal(toOneline(a), toOneline(b));
      assert.notEqual(rfc4514Of(a), rfc4514Of(b));
    }
  });
});

describe('the ambiguity of the one-line form', () => {
  const ambiguous = (rdns: Rdn[]) => onelineIsAmbiguous(rdns, toOneline(rdns));

  it('a value with a / followed by attr= is ambiguous; one with a / and no = after it is not', () => {
    assert.equal(ambiguous(name(one('O', 'Ceres Development/OU=x'), one('CN', 'alice'))), true);
    assert.equal(ambiguous(name(one('CN', 'alice/CN=bob'))), true);
    assert.equal(
      ambiguous(name(one('CN', 'alice/foo=bar'))),
      true,
      'an unknown attribute name reads back as another RDN too',
    );
    assert.equal(ambiguous(name(one('CN', 'x/2.5.4.3=y'))), true, 'so does a dotted OID');
    assert.equal(ambiguous(name(one('CN', 'host/name.cern.ch'))), false);
    assert.equal(ambiguous(name(one('CN', 'a/=b/ c=d'))), false);
    assert.equal(ambiguous(name(one('O', 'Ceres Development'), one('OU', 'x'), one('CN', 'alice'))), false);
  });

  it('a value with a + followed by attr= is ambiguous; a real multi-valued RDN is not', () => {
    assert.equal(ambiguous(name(one('CN', 'a+UID=b'))), true);
    assert.equal(
      ambiguous(
        name([
          ['CN', 'a'],
          ['UID', 'b'],
        ]),
      ),
      false,
    );
    assert.equal(ambiguous(name(one('CN', 'C++ builders+1'))), false);
  });

  it('a value that spells an escaped byte is ambiguous; real non-ASCII bytes are not', () => {
    assert.equal(ambiguous(name(one('CN', 'a\\xC3\\xA9'))), true);
    assert.equal(ambiguous(name(one('CN', 'a\\x41'))), true);
    assert.equal(ambiguous(name(one('CN', 'aé \\ b\\x4'))), false);
    const bmp = { tag: TAG.BMP_STRING, bytes: Buffer.from('00410062', 'hex') };
    assert.equal(ambiguous(name(one('CN', bmp))), false);
  });

  it('the empty name is not ambiguous; a string that is no one-line DN has no key', () => {
    assert.equal(ambiguous([]), false);
    for (const s of ['CN=x', '/', '/=x', '/ CN=x', 'https://issuer.example#sub'])
      assert.equal(rfc4514OfOneline(s), undefined, s);
  });
});

describe('a stored one-line DN converts exactly to the key of its certificate', () => {
  it('for single- and multi-valued RDNs, escaped bytes, dotted OIDs and other string types', () => {
    const subjects = [
      name(one('O', 'Ceres Development'), one('OU', 'x'), one('CN', 'alice')),
      name(one('O', 'Grid'), [
        ['CN', 'a'],
        ['UID', 'b'],
      ]),
      name(one('CN', 'Jérôme, "the" <admin>; #1\\')),
      name(one('CN', 'host/name.cern.ch'), one('2.5.4.99', 'v')),
      name(one('CN', { tag: TAG.PRINTABLE_STRING, bytes: Buffer.from('Jane') })),
      name(one('CN', { tag: TAG.BMP_STRING, bytes: Buffer.from('004a00e9', 'hex') })),
    ];
    for (const s of subjects) assert.equal(rfc4514OfOneline(toOneline(s)), rfc4514Of(s), toOneline(s));
  });
});
