/**
 * Grid CA directories (X509_CERT_DIR, /etc/grid-security/certificates): each CA
 * certificate under its OpenSSL subject hash `<hash>.0` (`.1`, ... on collisions),
 * with a Globus `<hash>.signing_policy` naming the subjects the CA may sign. The ARC
 * client and other GSI tools look CAs up by that hash and refuse a CA without a
 * signing policy. fetch-crl keeps each CA's CRL beside it as `<hash>.r0`.
 */
import { onelineOf, parseName, subjectHash, toOneline } from './dn.js';
import { parseCertificate, toPem } from './certificate.js';

export interface CaDirEntry {
  readonly hash: string;
  /** File names relative to the CA directory. */
  readonly certFile: string;
  readonly signingPolicyFile: string;
  /** Where the CA's CRL goes (fetch-crl's name). */
  readonly crlFile: string;
  readonly certPem: string;
  readonly signingPolicy: string;
}

/**
 * The `.0` certificate and signing policy for a CA. The policy allows subjects
 * under the CA's own namespace (its DN without the last RDN, `/*`).
 */
export function caDirEntry(caDer: Uint8Array): CaDirEntry {
  const ca = parseCertificate(caDer);
  const hash = subjectHash(ca.subjectDer);
  const caDn = onelineOf(ca.subjectDer);
  const parent = toOneline(parseName(ca.subjectDer).slice(0, -1));
  return {
    hash,
    certFile: `${hash}.0`,
    signingPolicyFile: `${hash}.signing_policy`,
    crlFile: `${hash}.r0`,
    certPem: toPem(ca.der),
    signingPolicy: signingPolicyText(caDn, `${parent}/*`),
  };
}

export function signingPolicyText(caDn: string, subjectsPattern: string): string {
  for (const s of [caDn, subjectsPattern]) {
    // The format quotes with ' and "; a DN containing them cannot be expressed.
    if (/['"\n]/.test(s)) throw new Error('a DN with quotes or newlines cannot go into a signing policy');
  }
  return [
    `access_id_CA      X509         '${caDn}'`,
    `pos_rights        globus        CA:sign`,
    `cond_subjects     globus       '"${subjectsPattern}"'`,
    '',
  ].join('\n');
}
