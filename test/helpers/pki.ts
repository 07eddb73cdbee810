/**
 * Certificates for tests, good and deliberately bad: CAs (root and intermediate),
 * user and host certificates, RFC 3820 and legacy proxies, each with knobs for the
 * defects the verifier must refuse (expired, not yet valid, wrong signer, subject
 * not extending the issuer's, non-critical proxyCertInfo, ...).
 *
 * Keys are ECDSA P-256 by default (fast to generate on a small machine, every
 * credential gets its own key); pass `rsa: true` where RSA matters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import { x509, type CryptoKey, type CryptoKeyPair } from '../../src/pki/x509-lib.js';
import { issueCertificate, DAY_MS } from '../../src/pki/issue.js';
import { appendCn, encodeOnelineDn } from '../../src/pki/dn.js';
import { parseCertificate, toPem, type ParsedCertificate } from '../../src/pki/certificate.js';
import { OID_PROXY_CERT_INFO, PROXY_POLICY, encodeProxyCertInfo } from '../../src/pki/proxy-cert-info.js';
import { generateRsaKeyPair, privateKeyToPem, privateKeyToProxyPem } from '../../src/pki/keys.js';

export interface TestCred {
  readonly der: Buffer;
  readonly pem: string;
  readonly cert: ParsedCertificate;
  readonly keys: CryptoKeyPair;
  /** PKCS#8 PEM of the private key. */
  readonly keyPem: string;
}

const KU = x509.KeyUsageFlags;
const HOUR = 3600 * 1000;

export async function newKeys(rsa = false): Promise<CryptoKeyPair> {
  if (rsa) return generateRsaKeyPair();
  return webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
}

async function cred(der: Buffer, keys: CryptoKeyPair): Promise<TestCred> {
  return { der, pem: toPem(der), cert: parseCertificate(der), keys, keyPem: privateKeyToPem(keys.privateKey) };
}

interface Validity {
  readonly notBefore?: Date;
  readonly notAfter?: Date;
}
const validity = (v: Validity, defaultMs: number): { notBefore: Date; notAfter: Date } => ({
  notBefore: v.notBefore ?? new Date(Date.now() - HOUR),
  notAfter: v.notAfter ?? new Date(Date.now() + defaultMs),
});

export interface CaOptions extends Validity {
  readonly dn?: string;
  /** Signed by this CA (an intermediate) instead of self-signed. */
  readonly issuer?: TestCred;
  readonly pathLen?: number;
  /** Leave out keyCertSign. */
  readonly noCertSign?: boolean;
  /** basicConstraints cA=false: a "CA" that is not one. */
  readonly notCa?: boolean;
  readonly rsa?: boolean;
}

export async function makeCa(o: CaOptions = {}): Promise<TestCred> {
  const keys = await newKeys(o.rsa);
  const der = await issueCertificate({
    subject: o.dn ?? '/DC=org/DC=ceres-test/CN=Test CA',
    publicKey: keys.publicKey,
    ...(o.issuer === undefined
      ? { selfSigningKey: keys.privateKey }
      : { issuer: { certDer: o.issuer.der, key: o.issuer.keys.privateKey } }),
    ...validity(o, 3650 * DAY_MS),
    extensions: [
      new x509.BasicConstraintsExtension(o.notCa !== true, o.pathLen, true),
      new x509.KeyUsagesExtension(o.noCertSign === true ? KU.digitalSignature : KU.keyCertSign | KU.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return cred(der, keys);
}

export interface UserOptions extends Validity {
  /** One-line DN, or a DER Name (a subject the one-line form cannot spell). */
  readonly dn?: string | Uint8Array;
  /** Self-signed leaf (not issued by any CA). */
  readonly selfSigned?: boolean;
  /** Key usage flags (default digitalSignature | keyEncipherment). */
  readonly keyUsage?: number;
  /** Extended key usages (default clientAuth). */
  readonly eku?: readonly string[];
  readonly ca?: boolean;
  /** Extra extensions (e.g. an unknown critical one). */
  readonly extra?: readonly x509.Extension[];
  readonly rsa?: boolean;
}

export async function makeUser(issuer: TestCred | undefined, o: UserOptions = {}): Promise<TestCred> {
  const keys = await newKeys(o.rsa);
  const exts: x509.Extension[] = [
    new x509.BasicConstraintsExtension(o.ca === true, undefined, true),
    new x509.KeyUsagesExtension(o.keyUsage ?? KU.digitalSignature | KU.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([...(o.eku ?? [x509.ExtendedKeyUsage.clientAuth])], false),
    ...(o.extra ?? []),
  ];
  const der = await issueCertificate({
    subject: o.dn ?? '/DC=org/DC=ceres-test/CN=Test User',
    publicKey: keys.publicKey,
    ...(o.selfSigned === true || issuer === undefined
      ? { selfSigningKey: keys.privateKey }
      : { issuer: { certDer: issuer.der, key: issuer.keys.privateKey } }),
    ...validity(o, 365 * DAY_MS),
    extensions: exts,
  });
  return cred(der, keys);
}

export interface ProxyOptions extends Validity {
  /** Policy language: inheritAll (default), limited, independent, or an OID. */
  readonly policy?: 'inheritAll' | 'limited' | 'independent' | (string & {});
  readonly pathLen?: number;
  /** Subject as a one-line DN instead of issuer subject + CN=<serial>. */
  readonly subject?: string;
  /** Sign with this key instead of the signer's. */
  readonly signWith?: CryptoKey;
  /** proxyCertInfo criticality (default true). */
  readonly critical?: boolean;
  /** Legacy Globus proxy: no proxyCertInfo, last CN "proxy" or "limited proxy". */
  readonly legacy?: 'proxy' | 'limited proxy';
  /** Pre-RFC draft proxyCertInfo OID. */
  readonly draft?: boolean;
  readonly ca?: boolean;
  readonly withSan?: boolean;
  readonly rsa?: boolean;
}

export async function makeProxy(signer: TestCred, o: ProxyOptions = {}): Promise<TestCred> {
  const keys = await newKeys(o.rsa);
  const serial = Math.floor(Math.random() * 2 ** 30) + 1;
  const lang =
    o.policy === undefined ? PROXY_POLICY.inheritAll : ((PROXY_POLICY as Record<string, string>)[o.policy] ?? o.policy);
  const exts: x509.Extension[] = [new x509.KeyUsagesExtension(KU.digitalSignature | KU.keyEncipherment, true)];
  if (o.legacy === undefined) {
    exts.push(
      new x509.Extension(
        o.draft === true ? '1.3.6.1.4.1.3536.1.222' : OID_PROXY_CERT_INFO,
        o.critical ?? true,
        encodeProxyCertInfo({ ...(o.pathLen === undefined ? {} : { pathLen: o.pathLen }), policyLanguage: lang }),
      ),
    );
  }
  if (o.ca === true) exts.push(new x509.BasicConstraintsExtension(true, undefined, true));
  if (o.withSan === true)
    exts.push(new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }], false));
  const subject =
    o.subject !== undefined ? encodeOnelineDn(o.subject) : appendCn(signer.cert.subjectDer, o.legacy ?? String(serial));
  const der = await issueCertificate({
    subject,
    publicKey: keys.publicKey,
    issuer: { certDer: signer.der, key: o.signWith ?? signer.keys.privateKey },
    ...validity(o, 12 * HOUR),
    serial: BigInt(serial),
    extensions: exts,
  });
  return cred(der, keys);
}

/** DER list of a chain, leaf first. */
export function ders(...creds: readonly TestCred[]): Buffer[] {
  return creds.map((c) => c.der);
}

/** Proxy file text as arcproxy writes it: leaf cert, its key (PKCS#1 for RSA), then the rest of the chain. */
export function proxyFileText(leaf: TestCred, ...rest: readonly TestCred[]): string {
  return leaf.pem + privateKeyToProxyPem(leaf.keys.privateKey) + rest.map((c) => c.pem).join('');
}

export const hoursAgo = (n: number): Date => new Date(Date.now() - n * HOUR);
export const hoursFromNow = (n: number): Date => new Date(Date.now() + n * HOUR);

/** A temporary directory, removed by the hook it is registered with (`after`, or `t.after` of a test). */
export function tempDir(register: (fn: () => void) => void, prefix = 'ceres-pki-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  register(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface CrlOptions {
  readonly thisUpdate?: Date;
  readonly nextUpdate?: Date;
  /** Sign with this key instead of the CA's (a CRL that does not verify). */
  readonly signWith?: CryptoKey;
}

/** A CRL (DER) of `ca` listing the serial numbers of `revoked`; valid from an hour ago for a day. */
export async function makeCrl(ca: TestCred, revoked: readonly TestCred[], o: CrlOptions = {}): Promise<Buffer> {
  const key = o.signWith ?? ca.keys.privateKey;
  const signingAlgorithm =
    key.algorithm.name === 'ECDSA'
      ? { name: 'ECDSA', hash: 'SHA-256' }
      : { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  const crl = await x509.X509CrlGenerator.create({
    issuer: new x509.X509Certificate(ca.der).subjectName,
    thisUpdate: o.thisUpdate ?? new Date(Date.now() - HOUR),
    nextUpdate: o.nextUpdate ?? new Date(Date.now() + 24 * HOUR),
    entries: revoked.map((c) => ({ serialNumber: c.cert.serialHex, revocationDate: new Date(Date.now() - HOUR / 2) })),
    signingKey: key,
    signingAlgorithm,
  });
  return Buffer.from(crl.rawData);
}
