/**
 * Distinguished names as the grid sees them.
 *
 * - The identity of a user is the OpenSSL "one-line" form of the end-entity subject
 *   (`/DC=org/DC=example/CN=Jane Doe`), which is what A-REX records as a job's owner
 *   and what grid-mapfiles and ACLs contain. `toOneline` reproduces OpenSSL's
 *   X509_NAME_oneline byte for byte: short attribute names, `/` before every RDN
 *   (`+` between the values of a multi-valued one), bytes outside printable ASCII
 *   as `\xHH`.
 * - Names are compared the way OpenSSL compares them: on the canonical encoding
 *   (strings converted to UTF-8, ASCII lower-cased, white space trimmed and collapsed).
 * - CA directories name a CA `<hash>.0` where hash is OpenSSL's X509_NAME_hash: the
 *   first four bytes of SHA-1 over that canonical encoding, read little-endian.
 */
import { createHash } from 'node:crypto';
import {
  DerError,
  TAG,
  children,
  content,
  decodeOid,
  encodeOid,
  encodeTlv,
  expectTag,
  parseDer,
  raw,
  type Tlv,
} from './der.js';

export interface Ava {
  readonly oid: string;
  /** Universal tag of the value (UTF8String, PrintableString, ...). */
  readonly tag: number;
  /** Content octets of the value, as signed. */
  readonly value: Uint8Array;
}
/** A relative distinguished name: one or more attribute values (usually one). */
export type Rdn = readonly Ava[];

interface AttrType {
  readonly short: string;
  readonly oid: string;
  /** String type used when we encode a value of this attribute. */
  readonly tag: number;
}

const ATTRS: readonly AttrType[] = [
  { short: 'C', oid: '2.5.4.6', tag: TAG.PRINTABLE_STRING },
  { short: 'ST', oid: '2.5.4.8', tag: TAG.UTF8_STRING },
  { short: 'L', oid: '2.5.4.7', tag: TAG.UTF8_STRING },
  { short: 'O', oid: '2.5.4.10', tag: TAG.UTF8_STRING },
  { short: 'OU', oid: '2.5.4.11', tag: TAG.UTF8_STRING },
  { short: 'CN', oid: '2.5.4.3', tag: TAG.UTF8_STRING },
  { short: 'DC', oid: '0.9.2342.19200300.100.1.25', tag: TAG.IA5_STRING },
  { short: 'UID', oid: '0.9.2342.19200300.100.1.1', tag: TAG.UTF8_STRING },
  { short: 'emailAddress', oid: '1.2.840.113549.1.9.1', tag: TAG.IA5_STRING },
  { short: 'serialNumber', oid: '2.5.4.5', tag: TAG.PRINTABLE_STRING },
  { short: 'SN', oid: '2.5.4.4', tag: TAG.UTF8_STRING },
  { short: 'GN', oid: '2.5.4.42', tag: TAG.UTF8_STRING },
  { short: 'title', oid: '2.5.4.12', tag: TAG.UTF8_STRING },
  { short: 'street', oid: '2.5.4.9', tag: TAG.UTF8_STRING },
  { short: 'postalCode', oid: '2.5.4.17', tag: TAG.UTF8_STRING },
  { short: 'initials', oid: '2.5.4.43', tag: TAG.UTF8_STRING },
  { short: 'pseudonym', oid: '2.5.4.65', tag: TAG.UTF8_STRING },
  { short: 'dnQualifier', oid: '2.5.4.46', tag: TAG.PRINTABLE_STRING },
  { short: 'name', oid: '2.5.4.41', tag: TAG.UTF8_STRING },
  { short: 'description', oid: '2.5.4.13', tag: TAG.UTF8_STRING },
  { short: 'businessCategory', oid: '2.5.4.15', tag: TAG.UTF8_STRING },
  { short: 'generationQualifier', oid: '2.5.4.44', tag: TAG.UTF8_STRING },
  { short: 'role', oid: '2.5.4.72', tag: TAG.UTF8_STRING },
  { short: 'organizationIdentifier', oid: '2.5.4.97', tag: TAG.UTF8_STRING },
  { short: 'unstructuredName', oid: '1.2.840.113549.1.9.2', tag: TAG.IA5_STRING },
  { short: 'jurisdictionC', oid: '1.3.6.1.4.1.311.60.2.1.3', tag: TAG.PRINTABLE_STRING },
  { short: 'jurisdictionST', oid: '1.3.6.1.4.1.311.60.2.1.2', tag: TAG.UTF8_STRING },
  { short: 'jurisdictionL', oid: '1.3.6.1.4.1.311.60.2.1.1', tag: TAG.UTF8_STRING },
];
const BY_OID = new Map(ATTRS.map((a) => [a.oid, a]));
const BY_SHORT = new Map(ATTRS.map((a) => [a.short.toLowerCase(), a]));

export const OID_CN = '2.5.4.3';

/** The name the one-line form gives an attribute type: its short name, else the dotted OID. */
export function attrName(oid: string): string {
  return BY_OID.get(oid)?.short ?? oid;
}

/** Decode a DER Name (SEQUENCE OF RDN) into its RDNs, keeping the value bytes. */
export function parseName(nameDer: Uint8Array): Rdn[] {
  return nameRdns(parseDer(nameDer));
}

export function nameRdns(name: Tlv): Rdn[] {
  expectTag(name, TAG.SEQUENCE, 'name');
  return children(name).map((set) => {
    expectTag(set, TAG.SET, 'relative distinguished name');
    const avas = children(set).map((seq) => {
      const [t, v] = children(expectTag(seq, TAG.SEQUENCE, 'name attribute'));
      if (t === undefined || v === undefined) throw new DerError('name attribute: missing type or value');
      return { oid: decodeOid(t), tag: v.tag, value: content(v) };
    });
    if (avas.length === 0) throw new DerError('empty relative distinguished name');
    return avas;
  });
}

/** OpenSSL X509_NAME_oneline form. */
export function toOneline(rdns: readonly Rdn[]): string {
  let out = '';
  for (const rdn of rdns) {
    for (const [i, ava] of rdn.entries()) {
      out += `${i === 0 ? '/' : '+'}${attrName(ava.oid)}=`;
      for (const b of ava.value) {
        out += b < 0x20 || b > 0x7e ? `\\x${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b);
      }
    }
  }
  return out;
}

export function onelineOf(nameDer: Uint8Array): string {
  return toOneline(parseName(nameDer));
}

/** Decode a string value to text (for messages and the CN of proxies). */
export function avaText(ava: Ava): string {
  switch (ava.tag) {
    case TAG.BMP_STRING:
      return Buffer.from(ava.value).swap16().toString('utf16le');
    case TAG.UNIVERSAL_STRING: {
      let s = '';
      for (let i = 0; i + 3 < ava.value.length; i += 4) {
        s += String.fromCodePoint(Buffer.from(ava.value.subarray(i, i + 4)).readUInt32BE(0));
      }
      return s;
    }
    case TAG.T61_STRING:
      return Buffer.from(ava.value).toString('latin1');
    default:
      return Buffer.from(ava.value).toString('utf8');
  }
}

const CANON_TAGS: ReadonlySet<number> = new Set([
  TAG.UTF8_STRING,
  TAG.BMP_STRING,
  TAG.UNIVERSAL_STRING,
  TAG.PRINTABLE_STRING,
  TAG.T61_STRING,
  TAG.IA5_STRING,
  TAG.VISIBLE_STRING,
]);
const isSpace = (b: number): boolean => b === 0x20 || (b >= 0x09 && b <= 0x0d);

function canonValue(ava: Ava): Buffer {
  if (!CANON_TAGS.has(ava.tag)) return encodeTlv(ava.tag, ava.value);
  const utf8 = Buffer.from(avaText(ava), 'utf8');
  let s = 0;
  let e = utf8.length;
  while (s < e && isSpace(utf8[s] as number)) s++;
  while (e > s && isSpace(utf8[e - 1] as number)) e--;
  const out: number[] = [];
  for (let i = s; i < e;) {
    const b = utf8[i] as number;
    if (b >= 0x80) {
      out.push(b);
      i++;
    } else if (isSpace(b)) {
      out.push(0x20);
      while (i < e && isSpace(utf8[i] as number)) i++;
    } else {
      out.push(b >= 0x41 && b <= 0x5a ? b + 0x20 : b);
      i++;
    }
  }
  return encodeTlv(TAG.UTF8_STRING, Buffer.from(out));
}

/**
 * OpenSSL's canonical name encoding: the DER of each canonicalised RDN SET,
 * concatenated without the outer SEQUENCE header.
 */
export function canonicalEncoding(rdns: readonly Rdn[]): Buffer {
  return Buffer.concat(
    rdns.map((rdn) => {
      const avas = rdn.map((a) => encodeTlv(TAG.SEQUENCE, encodeOid(a.oid), canonValue(a)));
      avas.sort((a, b) => Buffer.compare(a, b)); // DER orders SET OF elements by their encoding
      return encodeTlv(TAG.SET, ...avas);
    }),
  );
}

/** OpenSSL X509_NAME_hash (the `openssl x509 -hash` value), 8 lower-case hex digits. */
export function subjectHash(nameDer: Uint8Array): string {
  const md = createHash('sha1')
    .update(canonicalEncoding(parseName(nameDer)))
    .digest();
  return md.readUInt32LE(0).toString(16).padStart(8, '0');
}

/** Name equality as OpenSSL decides it (X509_NAME_cmp). */
export function sameName(a: readonly Rdn[], b: readonly Rdn[]): boolean {
  return a.length === b.length && canonicalEncoding(a).equals(canonicalEncoding(b));
}

export interface DnPart {
  readonly type: string;
  readonly value: string;
}

/**
 * Parse a one-line DN (`/O=Grid/OU=Dev/CN=Jane`) into attribute parts, in order.
 * Used to make certificates; a `/` inside a value is only safe when it is not
 * followed by something that looks like `ATTR=`.
 */
export function parseOnelineDn(dn: string): DnPart[] {
  if (!dn.startsWith('/')) throw new DerError('a one-line DN starts with /');
  const pieces = dn.slice(1).split(/\/(?=[A-Za-z][A-Za-z0-9.]*=)/);
  return pieces.map((p) => {
    const i = p.indexOf('=');
    if (i <= 0) throw new DerError(`bad DN component '${p}'`);
    return { type: p.slice(0, i), value: p.slice(i + 1) };
  });
}

function attrFor(type: string): { oid: string; tag: number } {
  const known = BY_SHORT.get(type.toLowerCase());
  if (known !== undefined) return known;
  if (/^\d+(\.\d+)+$/.test(type)) return { oid: type, tag: TAG.UTF8_STRING };
  throw new DerError(`unknown DN attribute type '${type}'`);
}

function encodeAva(part: DnPart): Buffer {
  const { oid, tag } = attrFor(part.type);
  if (
    (tag === TAG.PRINTABLE_STRING && !/^[A-Za-z0-9 '()+,\-./:=?]*$/.test(part.value)) ||
    (tag === TAG.IA5_STRING && /[^\p{ASCII}]/u.test(part.value))
  ) {
    throw new DerError(`value of ${part.type} has characters its string type cannot hold`);
  }
  return encodeTlv(TAG.SEQUENCE, encodeOid(oid), encodeTlv(tag, Buffer.from(part.value, 'utf8')));
}

/** DER Name with one single-valued RDN per part. */
export function encodeName(parts: readonly DnPart[]): Buffer {
  return encodeTlv(TAG.SEQUENCE, ...parts.map((p) => encodeTlv(TAG.SET, encodeAva(p))));
}

export function encodeOnelineDn(dn: string): Buffer {
  return encodeName(parseOnelineDn(dn));
}

/**
 * The subject of a proxy: the issuer's name exactly as encoded (so the issuer's own
 * string types survive) followed by one more RDN `CN=<cn>`.
 */
export function appendCn(issuerNameDer: Uint8Array, cn: string): Buffer {
  const name = parseDer(issuerNameDer);
  expectTag(name, TAG.SEQUENCE, 'name');
  const rdnsDer = children(name).map((r) => raw(r));
  return encodeTlv(TAG.SEQUENCE, ...rdnsDer, encodeTlv(TAG.SET, encodeAva({ type: 'CN', value: cn })));
}
