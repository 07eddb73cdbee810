/**
 * Decoding of VOMS attribute certificates (RFC 5755 ACs with the VOMS extensions) as
 * they travel inside a proxy certificate:
 *
 *   proxy extension 1.3.6.1.4.1.8005.100.100.5 = SEQUENCE OF SEQUENCE OF AttributeCertificate
 *     (one AC per VO the user asked for; older writers nest one level less)
 *   AttributeCertificate ::= SEQUENCE { acinfo, signatureAlgorithm, signatureValue BIT STRING }
 *   acinfo ::= SEQUENCE { version (v2 = 1), holder, issuer, signature, serialNumber,
 *                         attrCertValidityPeriod, attributes, issuerUniqueID?, extensions? }
 *   FQANs: attribute 1.3.6.1.4.1.8005.100.100.4, one IetfAttrSyntax value:
 *     SEQUENCE { policyAuthority [0] GeneralNames (URI "vo://host:port"), values SEQUENCE OF OCTET STRING }
 *   AC extension 1.3.6.1.4.1.8005.100.100.10: the VOMS server's certificate chain
 *     (SEQUENCE OF SEQUENCE OF Certificate) so that a relying party needs only the LSC file.
 *
 * Only decoding happens here: nothing is trusted until src/auth/voms/verify-ac.ts has
 * checked the holder, the times, the signature and the LSC. The exact bytes of acinfo
 * are kept because the signature covers them as encoded.
 */
import { parseCertificate, type ParsedCertificate } from '../../pki/certificate.js';
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
} from '../../pki/der.js';
import { nameRdns, type Rdn } from '../../pki/dn.js';

export const OID_VOMS_AC_SEQ = '1.3.6.1.4.1.8005.100.100.5';
export const OID_VOMS_FQANS = '1.3.6.1.4.1.8005.100.100.4';
export const OID_VOMS_AC_CERTS = '1.3.6.1.4.1.8005.100.100.10';
export const OID_VOMS_AC_TAGS = '1.3.6.1.4.1.8005.100.100.11';
export const OID_AC_TARGETS = '2.5.29.55';
export const OID_NO_REV_AVAIL = '2.5.29.56';
export const OID_AKI = '2.5.29.35';

/** Context-specific tags (constructed unless noted). */
const CTX0 = 0xa0;
const GN_URI = 0x86; // [6] IMPLICIT IA5String, primitive
const GN_DNS = 0x82; // [2] IMPLICIT IA5String, primitive
const GN_DIRECTORY = 0xa4; // [4] EXPLICIT Name

export interface AcExtension {
  readonly critical: boolean;
  readonly value: Uint8Array;
}

export interface AttributeCertificate {
  /** DER of the whole AC. */
  readonly der: Uint8Array;
  /** DER of acinfo exactly as signed. */
  readonly signedBytes: Uint8Array;
  readonly signatureAlgorithm: string;
  /** acinfo.signature: must equal signatureAlgorithm (RFC 5755 4.2). */
  readonly innerSignatureAlgorithm: string;
  readonly signature: Uint8Array;
  readonly version: number;
  /** Holder.baseCertificateID: the issuer names and serial of the certificate the AC was issued to. */
  readonly holder: { readonly issuers: readonly (readonly Rdn[])[]; readonly serialHex: string } | undefined;
  /** The directoryName(s) of the AC issuer (v2Form issuerName). */
  readonly issuers: readonly (readonly Rdn[])[];
  readonly serialHex: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** policyAuthority URI of the FQAN attribute, `vo://host:port`. */
  readonly policyAuthority: string | undefined;
  /** FQANs in order; undefined when the AC carries no VOMS FQAN attribute. */
  readonly fqans: readonly string[] | undefined;
  /** How many FQAN attributes the AC holds (exactly one is valid). */
  readonly fqanAttributes: number;
  readonly extensions: ReadonlyMap<string, AcExtension>;
  /** Certificates of the VOMS server as embedded in the AC (signer first), parseable ones only. */
  readonly embeddedCerts: readonly ParsedCertificate[];
  /** Target names (URI or DNS) of the targetInformation extension, when present. */
  readonly targets: readonly string[] | undefined;
}

/** The ACs of a proxy's VOMS extension value, in order (the first is the primary VO). */
export function decodeVomsExtension(value: Uint8Array): AttributeCertificate[] {
  const out: AttributeCertificate[] = [];
  collect(parseDer(value), out, 0);
  if (out.length === 0) throw new DerError('the VOMS extension holds no attribute certificate');
  return out;
}

function collect(t: Tlv, out: AttributeCertificate[], depth: number): void {
  expectTag(t, TAG.SEQUENCE, 'VOMS AC sequence');
  if (looksLikeAc(t)) {
    out.push(decodeAttributeCertificate(t));
    return;
  }
  if (depth >= 2) throw new DerError('VOMS extension nested too deeply');
  for (const c of children(t)) collect(c, out, depth + 1);
}

/** AC = SEQUENCE { SEQUENCE { INTEGER version, ... }, SEQUENCE algorithm, BIT STRING }. */
function looksLikeAc(t: Tlv): boolean {
  const parts = children(t);
  if (parts.length !== 3 || parts[0]?.tag !== TAG.SEQUENCE || parts[2]?.tag !== TAG.BIT_STRING) return false;
  return children(parts[0])[0]?.tag === TAG.INTEGER;
}

export function decodeAttributeCertificate(ac: Tlv): AttributeCertificate {
  const [info, alg, sig] = children(expectTag(ac, TAG.SEQUENCE, 'attribute certificate'));
  const f = children(expectTag(info, TAG.SEQUENCE, 'acinfo'));
  const [version, holder, issuer, innerAlg, serial, validity, attributes, ...rest] = f;
  const [nb, na] = children(expectTag(validity, TAG.SEQUENCE, 'AC validity'));
  if (nb?.tag !== TAG.GENERALIZED_TIME || na?.tag !== TAG.GENERALIZED_TIME)
    throw new DerError('AC validity: GeneralizedTime expected');
  const sigBits = content(expectTag(sig, TAG.BIT_STRING, 'AC signature'));
  if (sigBits[0] !== 0) throw new DerError('AC signature: unused bits');

  const extensions = new Map<string, AcExtension>();
  const extList = rest.find((t) => t.tag === TAG.SEQUENCE);
  if (extList !== undefined) {
    for (const e of children(extList)) {
      const parts = children(expectTag(e, TAG.SEQUENCE, 'AC extension'));
      const oid = decodeOid(parts[0] as Tlv);
      const critical = parts.length === 3 ? decodeBoolean(parts[1] as Tlv) : false;
      if (extensions.has(oid)) throw new DerError(`duplicate AC extension ${oid}`);
      extensions.set(oid, {
        critical,
        value: content(expectTag(parts[parts.length - 1], TAG.OCTET_STRING, 'AC extension value')),
      });
    }
  }

  let fqanAttributes = 0;
  let fqans: string[] | undefined;
  let policyAuthority: string | undefined;
  for (const a of children(expectTag(attributes, TAG.SEQUENCE, 'AC attributes'))) {
    const [type, values] = children(expectTag(a, TAG.SEQUENCE, 'AC attribute'));
    if (decodeOid(type as Tlv) !== OID_VOMS_FQANS) continue;
    fqanAttributes++;
    const ietf = children(expectTag(values, TAG.SET, 'FQAN attribute values'));
    if (ietf.length !== 1) throw new DerError('FQAN attribute: exactly one value expected');
    const d = decodeIetfAttr(ietf[0] as Tlv);
    fqans = d.values;
    policyAuthority = d.authority;
  }

  const certsExt = extensions.get(OID_VOMS_AC_CERTS);
  const targetsExt = extensions.get(OID_AC_TARGETS);
  return {
    der: raw(ac),
    signedBytes: raw(info as Tlv),
    signatureAlgorithm: algorithmOid(alg),
    innerSignatureAlgorithm: algorithmOid(innerAlg),
    signature: sigBits.subarray(1),
    version: Number(BigInt(`0x${hex(expectTag(version, TAG.INTEGER, 'AC version'))}`)),
    holder: decodeHolder(expectTag(holder, TAG.SEQUENCE, 'AC holder')),
    issuers: decodeIssuer(issuer),
    serialHex: hex(expectTag(serial, TAG.INTEGER, 'AC serial')),
    notBefore: decodeTime(nb),
    notAfter: decodeTime(na),
    policyAuthority,
    fqans,
    fqanAttributes,
    extensions,
    embeddedCerts: certsExt === undefined ? [] : decodeCertChains(certsExt.value),
    targets: targetsExt === undefined ? undefined : decodeTargets(targetsExt.value),
  };
}

function hex(t: Tlv): string {
  return Buffer.from(content(t)).toString('hex');
}

function algorithmOid(t: Tlv | undefined): string {
  const [oid] = children(expectTag(t, TAG.SEQUENCE, 'algorithm identifier'));
  return decodeOid(expectTag(oid, TAG.OID, 'algorithm'));
}

/** GeneralNames: only directoryName entries matter for names of certificates. */
function directoryNames(gn: Tlv): Rdn[][] {
  const out: Rdn[][] = [];
  for (const n of children(gn)) {
    if (n.tag === GN_DIRECTORY) out.push(nameRdns(children(n)[0] as Tlv));
  }
  return out;
}

/** Holder ::= SEQUENCE { baseCertificateID [0] IssuerSerial OPTIONAL, entityName [1] ..., objectDigestInfo [2] ... } */
function decodeHolder(h: Tlv): AttributeCertificate['holder'] {
  const base = children(h).find((t) => t.tag === CTX0);
  if (base === undefined) return undefined;
  // IMPLICIT: [0] replaces the IssuerSerial SEQUENCE tag: { issuer GeneralNames, serial INTEGER, issuerUID? }
  const [issuerNames, serial] = children(base);
  return {
    issuers: directoryNames(expectTag(issuerNames, TAG.SEQUENCE, 'holder issuer')),
    serialHex: hex(expectTag(serial, TAG.INTEGER, 'holder serial')),
  };
}

/** AttCertIssuer: v2Form [0] IMPLICIT V2Form { issuerName GeneralNames OPTIONAL, ... }; v1Form is a bare GeneralNames. */
function decodeIssuer(t: Tlv | undefined): Rdn[][] {
  if (t?.tag === CTX0) {
    const names = children(t).find((c) => c.tag === TAG.SEQUENCE);
    return names === undefined ? [] : directoryNames(names);
  }
  return directoryNames(expectTag(t, TAG.SEQUENCE, 'AC issuer'));
}

/** IetfAttrSyntax ::= SEQUENCE { policyAuthority [0] GeneralNames OPTIONAL, values SEQUENCE OF (OCTET STRING | OID | UTF8String) } */
function decodeIetfAttr(t: Tlv): { authority: string | undefined; values: string[] } {
  let authority: string | undefined;
  let values: string[] | undefined;
  for (const p of children(expectTag(t, TAG.SEQUENCE, 'IetfAttrSyntax'))) {
    if (p.tag === CTX0) {
      const uri = children(p).find((n) => n.tag === GN_URI);
      if (uri !== undefined) authority = Buffer.from(content(uri)).toString('latin1');
    } else if (p.tag === TAG.SEQUENCE) {
      values = children(p).map((v) => {
        if (v.tag !== TAG.OCTET_STRING && v.tag !== TAG.UTF8_STRING) throw new DerError('FQAN: string value expected');
        return Buffer.from(content(v)).toString('utf8');
      });
    }
  }
  if (values === undefined) throw new DerError('FQAN attribute without values');
  return { authority, values };
}

/** SEQUENCE OF SEQUENCE OF Certificate (VOMS), or a flat SEQUENCE OF Certificate. */
function decodeCertChains(value: Uint8Array): ParsedCertificate[] {
  const out: ParsedCertificate[] = [];
  const walk = (t: Tlv, depth: number): void => {
    const parts = children(expectTag(t, TAG.SEQUENCE, 'AC certificates'));
    // A certificate: SEQUENCE { tbs SEQUENCE, alg SEQUENCE, BIT STRING }.
    if (parts.length === 3 && parts[2]?.tag === TAG.BIT_STRING && depth > 0) {
      out.push(parseCertificate(raw(t)));
      return;
    }
    if (depth >= 2) throw new DerError('AC certificates nested too deeply');
    for (const p of parts) walk(p, depth + 1);
  };
  walk(parseDer(value), 0);
  return out;
}

/**
 * Targets (RFC 5755 4.3.2): SEQUENCE OF Targets; Targets ::= SEQUENCE OF Target; Target is a
 * CHOICE whose targetName is [0] EXPLICIT GeneralName. VOMS writes each target as a
 * SEQUENCE { [0] name, [1] group, [2] cert } around the same choices, so both shapes are
 * read: an AC that names this service in the VOMS shape must not be taken for one that
 * names nothing.
 */
function decodeTargets(value: Uint8Array): string[] {
  const out: string[] = [];
  const addName = (target: Tlv): void => {
    if (target.tag !== CTX0) return;
    for (const gn of children(target)) {
      if (gn.tag === GN_URI || gn.tag === GN_DNS) out.push(Buffer.from(content(gn)).toString('latin1'));
    }
  };
  for (const targets of children(expectTag(parseDer(value), TAG.SEQUENCE, 'AC targets'))) {
    for (const target of children(expectTag(targets, TAG.SEQUENCE, 'AC target list'))) {
      if (target.tag === TAG.SEQUENCE) children(target).forEach(addName);
      else addName(target);
    }
  }
  return out;
}
