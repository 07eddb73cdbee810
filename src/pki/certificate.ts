/**
 * A parsed X.509 certificate with what chain verification needs: exact name bytes,
 * validity, and the extensions that decide what a certificate may do (basic
 * constraints, key usage, extended key usage, RFC 3820 proxyCertInfo). Signature
 * checks are delegated to node:crypto (OpenSSL), which parses the same DER.
 */
import { X509Certificate as NodeX509, createHash } from 'node:crypto';
import {
  DerError,
  TAG,
  children,
  content,
  decodeBits,
  decodeBoolean,
  decodeOid,
  decodeSmallUint,
  decodeTime,
  expectTag,
  parseDer,
  raw,
  type Tlv,
} from './der.js';
import { nameRdns, toOneline, type Rdn } from './dn.js';
import { OID_PROXY_CERT_INFO, decodeProxyCertInfo, type ProxyCertInfo } from './proxy-cert-info.js';

export const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyId: '2.5.29.14',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  proxyCertInfo: OID_PROXY_CERT_INFO,
  /** Pre-RFC ("GT3") draft proxyCertInfo, different syntax; not accepted. */
  proxyCertInfoDraft: '1.3.6.1.4.1.3536.1.222',
  ekuClientAuth: '1.3.6.1.5.5.7.3.2',
  ekuAny: '2.5.29.37.0',
} as const;

/** Key usage bit numbers (RFC 5280 4.2.1.3). */
export const KU = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

export interface CertExtension {
  readonly critical: boolean;
  /** Content of the extnValue OCTET STRING (the DER of the extension itself). */
  readonly value: Uint8Array;
}

export interface ParsedCertificate {
  readonly der: Buffer;
  /** SHA-256 of the DER, lower-case hex. */
  readonly fingerprint256: string;
  readonly version: number;
  readonly serialHex: string;
  /** OID of the signature algorithm the issuer used. */
  readonly signatureAlgorithm: string;
  readonly issuerDer: Uint8Array;
  readonly issuer: readonly Rdn[];
  readonly subjectDer: Uint8Array;
  readonly subject: readonly Rdn[];
  readonly subjectOneline: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly spkiDer: Uint8Array;
  readonly extensions: ReadonlyMap<string, CertExtension>;
  /** Decoded basicConstraints; undefined when the extension is absent. */
  readonly basicConstraints: { readonly ca: boolean; readonly pathLen?: number } | undefined;
  /** Key usage test; undefined when the extension is absent (no restriction). */
  readonly keyUsage: ((bit: number) => boolean) | undefined;
  readonly extKeyUsage: readonly string[] | undefined;
  /** Decoded RFC 3820 proxyCertInfo; undefined when absent. */
  readonly proxyCertInfo: ProxyCertInfo | undefined;
  /** The same certificate parsed by OpenSSL, for signature checks. */
  readonly node: NodeX509;
}

export function parseCertificate(derIn: Uint8Array): ParsedCertificate {
  const der = Buffer.from(derIn);
  const cert = parseDer(der);
  const [tbs] = children(expectTag(cert, TAG.SEQUENCE, 'certificate'));
  const f = children(expectTag(tbs, TAG.SEQUENCE, 'tbsCertificate'));
  let i = 0;
  let version = 1;
  if (f[0]?.tag === 0xa0) {
    const [v] = children(f[0]);
    version = decodeSmallUint(expectTag(v, TAG.INTEGER, 'version')) + 1;
    i = 1;
  }
  const serial = expectTag(f[i], TAG.INTEGER, 'serial number');
  const [sigAlgOid] = children(expectTag(f[i + 1], TAG.SEQUENCE, 'signature algorithm'));
  const issuerT = expectTag(f[i + 2], TAG.SEQUENCE, 'issuer');
  const validity = children(expectTag(f[i + 3], TAG.SEQUENCE, 'validity'));
  const subjectT = expectTag(f[i + 4], TAG.SEQUENCE, 'subject');
  const spki = expectTag(f[i + 5], TAG.SEQUENCE, 'subjectPublicKeyInfo');
  const [nb, na] = validity;
  if (nb === undefined || na === undefined) throw new DerError('validity: missing time');

  const extensions = new Map<string, CertExtension>();
  const extWrap = f.slice(i + 6).find((t) => t.tag === 0xa3);
  if (extWrap !== undefined) {
    const [list] = children(extWrap);
    for (const e of children(expectTag(list, TAG.SEQUENCE, 'extensions'))) {
      const parts = children(expectTag(e, TAG.SEQUENCE, 'extension'));
      const oid = decodeOid(parts[0] as Tlv);
      const critical = parts.length === 3 ? decodeBoolean(parts[1] as Tlv) : false;
      const value = content(expectTag(parts[parts.length - 1], TAG.OCTET_STRING, 'extension value'));
      // RFC 5280 4.2: a certificate MUST NOT include more than one instance of an extension.
      if (extensions.has(oid)) throw new DerError(`duplicate extension ${oid}`);
      extensions.set(oid, { critical, value });
    }
  }

  const subject = nameRdns(subjectT);
  const node = new NodeX509(der);
  return {
    der,
    fingerprint256: createHash('sha256').update(der).digest('hex'),
    version,
    serialHex: Buffer.from(content(serial)).toString('hex'),
    signatureAlgorithm: decodeOid(expectTag(sigAlgOid, TAG.OID, 'signature algorithm')),
    issuerDer: raw(issuerT),
    issuer: nameRdns(issuerT),
    subjectDer: raw(subjectT),
    subject,
    subjectOneline: toOneline(subject),
    notBefore: decodeTime(nb),
    notAfter: decodeTime(na),
    spkiDer: raw(spki),
    extensions,
    basicConstraints: ext(extensions, OID.basicConstraints, decodeBasicConstraints),
    keyUsage: ext(extensions, OID.keyUsage, (t) => decodeBits(t)),
    extKeyUsage: ext(extensions, OID.extKeyUsage, (t) =>
      children(expectTag(t, TAG.SEQUENCE, 'extKeyUsage')).map(decodeOid),
    ),
    proxyCertInfo: ext(extensions, OID.proxyCertInfo, decodeProxyCertInfo),
    node,
  };
}

function ext<T>(m: ReadonlyMap<string, CertExtension>, oid: string, decode: (t: Tlv) => T): T | undefined {
  const e = m.get(oid);
  return e === undefined ? undefined : decode(parseDer(e.value));
}

function decodeBasicConstraints(t: Tlv): { ca: boolean; pathLen?: number } {
  const parts = children(expectTag(t, TAG.SEQUENCE, 'basicConstraints'));
  let ca = false;
  let pathLen: number | undefined;
  for (const p of parts) {
    if (p.tag === TAG.BOOLEAN) ca = decodeBoolean(p);
    else if (p.tag === TAG.INTEGER) pathLen = decodeSmallUint(p);
    else throw new DerError('basicConstraints: unexpected element');
  }
  return pathLen === undefined ? { ca } : { ca, pathLen };
}

/** PEM blocks of one type from a text (certificates by default), as DER. */
export function pemBlocks(text: string, type = 'CERTIFICATE'): Buffer[] {
  const re = new RegExp(`-----BEGIN ${type}-----([A-Za-z0-9+/=\\s]*?)-----END ${type}-----`, 'g');
  const out: Buffer[] = [];
  for (const m of text.matchAll(re)) out.push(Buffer.from((m[1] ?? '').replace(/\s+/g, ''), 'base64'));
  return out;
}

export function toPem(der: Uint8Array, type = 'CERTIFICATE'): string {
  const b64 = Buffer.from(der).toString('base64');
  return `-----BEGIN ${type}-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${type}-----\n`;
}
