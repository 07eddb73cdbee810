/**
 * Making certificates: CAs, host and user certificates for the development PKI, and
 * RFC 3820 proxies the way `arcproxy` (and the ARC client's delegation signer) makes
 * them:
 *   - subject = the issuer's subject exactly as encoded + one RDN `CN=<serial>`,
 *     issuer = the signer's subject, serial a random positive 31-bit number;
 *   - critical proxyCertInfo with policy language inheritAll (or Globus "limited");
 *   - critical keyUsage digitalSignature + keyEncipherment, no CA flag, no SAN;
 *   - valid from five minutes ago (clock skew) and never beyond the signer's notAfter.
 */
import { randomInt } from 'node:crypto';
import { x509, type CryptoKey } from './x509-lib.js';
import { appendCn, encodeOnelineDn } from './dn.js';
import { OID, parseCertificate, pemBlocks, toPem, type ParsedCertificate } from './certificate.js';
import { TAG, content, expectTag, parseDer } from './der.js';
import { OID_PROXY_CERT_INFO, PROXY_POLICY, encodeProxyCertInfo } from './proxy-cert-info.js';
import { importSigningKeyPem, spkiOf } from './keys.js';

export const DAY_MS = 24 * 3600 * 1000;
/** Backdating of new certificates so that a client with a slightly late clock accepts them. */
export const BACKDATE_MS = 5 * 60 * 1000;

export interface IssueParams {
  /** One-line DN (`/O=Grid/CN=Jane`) or a DER Name. */
  readonly subject: string | Uint8Array;
  /** Public key: a CryptoKey or SPKI DER. */
  readonly publicKey: CryptoKey | Uint8Array;
  /** Signer; absent = self-signed with `selfSigningKey`. */
  readonly issuer?: { readonly certDer: Uint8Array; readonly key: CryptoKey };
  readonly selfSigningKey?: CryptoKey;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** Positive serial number; random 63-bit when absent. */
  readonly serial?: bigint;
  readonly extensions?: readonly x509.Extension[];
}

/** Create and sign a certificate; returns its DER. */
export async function issueCertificate(p: IssueParams): Promise<Buffer> {
  const subject = typeof p.subject === 'string' ? encodeOnelineDn(p.subject) : p.subject;
  const issuerName = p.issuer === undefined ? subject : parseCertificate(p.issuer.certDer).subjectDer;
  const signingKey = p.issuer?.key ?? p.selfSigningKey;
  if (signingKey === undefined) throw new Error('issueCertificate: no signing key');
  const spki = p.publicKey instanceof Uint8Array ? p.publicKey : await spkiOf(p.publicKey);
  const serial = p.serial ?? (BigInt(randomInt(1, 2 ** 31)) << 32n) | BigInt(randomInt(0, 2 ** 32 - 1));
  if (serial <= 0n) throw new Error('issueCertificate: serial must be positive');
  let hex = serial.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: hex,
    subject: new x509.Name(Buffer.from(subject)),
    issuer: new x509.Name(Buffer.from(issuerName)),
    notBefore: p.notBefore,
    notAfter: p.notAfter,
    publicKey: Buffer.from(spki),
    signingKey,
    extensions: [...(p.extensions ?? [])],
  });
  return Buffer.from(cert.rawData);
}

const KU = x509.KeyUsageFlags;

export interface CaParams {
  readonly dn: string;
  readonly keys: { readonly privateKey: CryptoKey; readonly publicKey: CryptoKey };
  readonly days?: number;
  readonly now?: Date;
}

export async function createCaCertificate(p: CaParams): Promise<Buffer> {
  const now = p.now ?? new Date();
  return issueCertificate({
    subject: p.dn,
    publicKey: p.keys.publicKey,
    selfSigningKey: p.keys.privateKey,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + (p.days ?? 3650) * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(KU.keyCertSign | KU.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(p.keys.publicKey),
    ],
  });
}

export interface EndEntityParams {
  /** One-line DN or a DER Name (a subject the one-line form cannot spell). */
  readonly dn: string | Uint8Array;
  /** CryptoKey or SPKI DER. */
  readonly publicKey: CryptoKey | Uint8Array;
  readonly issuer: { readonly certDer: Uint8Array; readonly key: CryptoKey };
  /** host: serverAuth + clientAuth and subjectAltNames; user: clientAuth. */
  readonly kind: 'host' | 'user';
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly days?: number;
  readonly now?: Date;
}

export async function createEndEntityCertificate(p: EndEntityParams): Promise<Buffer> {
  const now = p.now ?? new Date();
  const issuerCert = parseCertificate(p.issuer.certDer);
  const exts: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    // digitalSignature is what TLS client authentication and signing proxies need.
    new x509.KeyUsagesExtension(
      KU.digitalSignature | KU.keyEncipherment | (p.kind === 'user' ? KU.dataEncipherment : 0),
      true,
    ),
    new x509.ExtendedKeyUsageExtension(
      p.kind === 'host'
        ? [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]
        : [x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.SubjectKeyIdentifierExtension.create(
      p.publicKey instanceof Uint8Array ? Buffer.from(p.publicKey) : p.publicKey,
    ),
  ];
  const aki = authorityKeyId(issuerCert);
  if (aki !== undefined) exts.push(aki);
  const names = [
    ...(p.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(p.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (names.length > 0) exts.push(new x509.SubjectAlternativeNameExtension(names, false));
  return issueCertificate({
    subject: p.dn,
    publicKey: p.publicKey,
    issuer: p.issuer,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(Math.min(now.getTime() + (p.days ?? 365) * DAY_MS, issuerCert.notAfter.getTime())),
    extensions: exts,
  });
}

/** authorityKeyIdentifier pointing at the issuer's own subjectKeyIdentifier, when it has one. */
function authorityKeyId(issuer: ParsedCertificate): x509.Extension | undefined {
  const ski = issuer.extensions.get(OID.subjectKeyId);
  if (ski === undefined) return undefined;
  const id = parseDer(ski.value);
  return new x509.AuthorityKeyIdentifierExtension(
    Buffer.from(content(expectTag(id, TAG.OCTET_STRING, 'subjectKeyIdentifier'))).toString('hex'),
    false,
  );
}

export type ProxyPolicyName = 'inheritAll' | 'limited' | 'independent';

export interface ProxyParams {
  /** Lifetime from now; default 12 hours (arcproxy's default). Clamped to the signer's notAfter. */
  readonly lifetimeSeconds?: number;
  readonly policy?: ProxyPolicyName;
  /** pCPathLenConstraint: how many further proxies may be signed below this one. */
  readonly pathLen?: number;
  /** Serial number and last CN of the subject; random positive 31-bit when absent. */
  readonly serial?: number;
  readonly now?: Date;
}

/** Sign an RFC 3820 proxy for `publicKey` with the signer's certificate and key. */
export async function createProxyCertificate(
  signerCertDer: Uint8Array,
  signerKey: CryptoKey,
  publicKey: CryptoKey | Uint8Array,
  p: ProxyParams = {},
): Promise<Buffer> {
  const signer = parseCertificate(signerCertDer);
  const now = p.now ?? new Date();
  const serial = p.serial ?? randomInt(1, 2 ** 31);
  const notAfter = Math.min(now.getTime() + (p.lifetimeSeconds ?? 12 * 3600) * 1000, signer.notAfter.getTime());
  const info = {
    ...(p.pathLen === undefined ? {} : { pathLen: p.pathLen }),
    policyLanguage: PROXY_POLICY[p.policy ?? 'inheritAll'],
  };
  return issueCertificate({
    subject: appendCn(signer.subjectDer, String(serial)),
    publicKey,
    issuer: { certDer: signerCertDer, key: signerKey },
    notBefore: new Date(Math.max(now.getTime() - BACKDATE_MS, signer.notBefore.getTime())),
    notAfter: new Date(notAfter),
    serial: BigInt(serial),
    extensions: [
      new x509.KeyUsagesExtension(KU.digitalSignature | KU.keyEncipherment, true),
      new x509.Extension(OID_PROXY_CERT_INFO, true, encodeProxyCertInfo(info)),
    ],
  });
}

export interface SignedProxy {
  /** The new proxy certificate (PEM). */
  readonly certPem: string;
  /** The new proxy followed by every certificate of the signer's file: what a delegation PUT carries. */
  readonly chainPem: string;
  readonly cert: ParsedCertificate;
}

/**
 * Sign a PKCS#10 request into an RFC 3820 proxy, as the ARC client (arcproxy's
 * delegation provider) does when answering a delegation request. `issuerCertPem`
 * may be a whole credential file (proxy file: proxy cert, key, user cert): its first
 * certificate signs, and all its certificates follow the new one in `chainPem`.
 * The request's own signature is checked first (proof of possession).
 */
export async function signProxyFromCsr(
  csrPem: string,
  issuerCertPem: string,
  issuerKeyPem: string,
  opts: ProxyParams = {},
): Promise<SignedProxy> {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  if (!(await csr.verify())) throw new Error('the certificate request signature does not verify');
  const chain = pemBlocks(issuerCertPem);
  const signerDer = chain[0];
  if (signerDer === undefined) throw new Error('no certificate in the signer credentials');
  const key = await importSigningKeyPem(issuerKeyPem);
  const der = await createProxyCertificate(signerDer, key, Buffer.from(csr.publicKey.rawData), opts);
  const certPem = toPem(der);
  return { certPem, chainPem: certPem + chain.map((c) => toPem(c)).join(''), cert: parseCertificate(der) };
}
