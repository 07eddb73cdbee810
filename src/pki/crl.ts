/**
 * X.509 certificate revocation lists (RFC 5280 5.1) as fetch-crl leaves them in a grid
 * CA directory: `<hash>.r0` (`.r1`, ... on collisions), PEM or DER. Parsed with the
 * project's DER reader (the exact signed bytes are needed for the signature) and
 * checked synchronously with node:crypto, since verification runs in the TLS handshake
 * path where nothing may wait.
 *
 * Only complete CRLs are used: a delta CRL, or one with a critical extension we do not
 * understand (e.g. an issuing distribution point that narrows its scope), is refused as
 * a whole rather than read as if it listed every revocation.
 */
import { type KeyObject, verify as verifySignature } from 'node:crypto';
import {
  DerError,
  TAG,
  children,
  content,
  decodeBoolean,
  decodeOid,
  decodeTime,
  expectTag,
  parseDer,
  raw,
  type Tlv,
} from './der.js';
import { nameRdns, toOneline, type Rdn } from './dn.js';
import { pemBlocks } from './certificate.js';

export interface ParsedCrl {
  readonly issuer: readonly Rdn[];
  readonly issuerOneline: string;
  readonly thisUpdate: Date;
  /** When the next CRL is due; after it this one is stale. */
  readonly nextUpdate: Date | undefined;
  /** Revoked serial numbers (hex of the INTEGER's content octets, as ParsedCertificate.serialHex) → revocation date. */
  readonly revoked: ReadonlyMap<string, Date>;
  /** Whether the CRL's signature verifies with this public key (OpenSSL, memoised by the caller). */
  signedBy(key: KeyObject): boolean;
}

/** RFC 5280 5.2 CRL extensions we can honour when critical. */
const UNDERSTOOD_CRITICAL = new Set(['2.5.29.20' /* cRLNumber */, '2.5.29.35' /* authorityKeyIdentifier */]);
const DELTA_CRL_INDICATOR = '2.5.29.27';

/** Signature algorithms of CRLs seen in grid CA directories: digest name for node:crypto. */
const DIGESTS: ReadonlyMap<string, string | null> = new Map([
  ['1.2.840.113549.1.1.5', 'sha1'],
  ['1.2.840.113549.1.1.14', 'sha224'],
  ['1.2.840.113549.1.1.11', 'sha256'],
  ['1.2.840.113549.1.1.12', 'sha384'],
  ['1.2.840.113549.1.1.13', 'sha512'],
  ['1.2.840.10045.4.1', 'sha1'],
  ['1.2.840.10045.4.3.2', 'sha256'],
  ['1.2.840.10045.4.3.3', 'sha384'],
  ['1.2.840.10045.4.3.4', 'sha512'],
  ['1.3.101.112', null], // Ed25519
]);

/** A CRL file's content, PEM (`X509 CRL`) or DER. Throws DerError with the reason. */
export function parseCrlFile(bytes: Buffer): ParsedCrl {
  const text = bytes.toString('latin1');
  if (text.includes('-----BEGIN')) {
    const blocks = pemBlocks(text, 'X509 CRL');
    if (blocks.length !== 1)
      throw new DerError(blocks.length === 0 ? 'no X509 CRL PEM block' : 'more than one CRL in the file');
    return parseCrl(blocks[0] as Buffer);
  }
  return parseCrl(bytes);
}

export function parseCrl(der: Uint8Array): ParsedCrl {
  const [tbs, sigAlg, sig] = children(expectTag(parseDer(der), TAG.SEQUENCE, 'CRL'));
  const tbsT = expectTag(tbs, TAG.SEQUENCE, 'tbsCertList');
  const f = children(tbsT);
  let i = f[0]?.tag === TAG.INTEGER ? 1 : 0; // version v2 is optional (v1 CRLs omit it)
  i++; // inner signature algorithm, repeated outside
  const issuerT = expectTag(f[i++], TAG.SEQUENCE, 'CRL issuer');
  const thisUpdate = decodeTime(timeAt(f[i++], 'thisUpdate'));
  let nextUpdate: Date | undefined;
  if (f[i] !== undefined && (f[i]?.tag === TAG.UTC_TIME || f[i]?.tag === TAG.GENERALIZED_TIME))
    nextUpdate = decodeTime(f[i++] as Tlv);
  const revoked = new Map<string, Date>();
  if (f[i]?.tag === TAG.SEQUENCE) {
    for (const entry of children(f[i++] as Tlv)) {
      const [serial, date, exts] = children(expectTag(entry, TAG.SEQUENCE, 'revoked certificate'));
      if (exts !== undefined) checkExtensions(exts, 'CRL entry');
      revoked.set(
        Buffer.from(content(expectTag(serial, TAG.INTEGER, 'revoked serial'))).toString('hex'),
        decodeTime(timeAt(date, 'revocationDate')),
      );
    }
  }
  if (f[i]?.tag === 0xa0) {
    const [list] = children(f[i++] as Tlv);
    checkExtensions(expectTag(list, TAG.SEQUENCE, 'CRL extensions'), 'CRL');
  }
  if (i !== f.length) throw new DerError('tbsCertList: unexpected trailing elements');

  const algorithm = decodeOid(
    expectTag(children(expectTag(sigAlg, TAG.SEQUENCE, 'CRL signature algorithm'))[0], TAG.OID, 'signature algorithm'),
  );
  const digest = DIGESTS.get(algorithm);
  if (digest === undefined) throw new DerError(`unsupported CRL signature algorithm ${algorithm}`);
  const sigBits = content(expectTag(sig, TAG.BIT_STRING, 'CRL signature'));
  if (sigBits[0] !== 0) throw new DerError('CRL signature: unused bits');
  const signed = Buffer.from(raw(tbsT));
  const signature = Buffer.from(sigBits.subarray(1));
  const issuer = nameRdns(issuerT);
  return {
    issuer,
    issuerOneline: toOneline(issuer),
    thisUpdate,
    nextUpdate,
    revoked,
    signedBy(key: KeyObject): boolean {
      try {
        return verifySignature(digest, signed, key, signature);
      } catch {
        return false;
      }
    },
  };
}

function timeAt(t: Tlv | undefined, what: string): Tlv {
  if (t === undefined || (t.tag !== TAG.UTC_TIME && t.tag !== TAG.GENERALIZED_TIME))
    throw new DerError(`${what}: not a time`);
  return t;
}

function checkExtensions(list: Tlv, what: string): void {
  for (const e of children(expectTag(list, TAG.SEQUENCE, `${what} extensions`))) {
    const parts = children(expectTag(e, TAG.SEQUENCE, `${what} extension`));
    const oid = decodeOid(parts[0] as Tlv);
    const critical = parts.length === 3 ? decodeBoolean(parts[1] as Tlv) : false;
    if (oid === DELTA_CRL_INDICATOR) throw new DerError('a delta CRL (only complete CRLs are used)');
    if (critical && !UNDERSTOOD_CRITICAL.has(oid))
      throw new DerError(`${what} has an unsupported critical extension ${oid}`);
  }
}
