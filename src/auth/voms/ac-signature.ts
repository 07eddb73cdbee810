/**
 * The signature of an attribute certificate, checked with node:crypto (OpenSSL) over
 * the exact acinfo bytes. The algorithm's key type must be the key's type, so an RSA
 * OID can never be satisfied by an EC key or the reverse.
 */
import { verify } from 'node:crypto';
import type { ParsedCertificate } from '../../pki/certificate.js';
import type { AttributeCertificate } from './attribute-certificate.js';

/** Signature algorithms VOMS servers use (RSA with SHA-1 or SHA-2; ECDSA). MD5 and older are refused. */
const ALGORITHMS: ReadonlyMap<string, { readonly hash: string; readonly key: 'rsa' | 'ec' }> = new Map([
  ['1.2.840.113549.1.1.5', { hash: 'sha1', key: 'rsa' }],
  ['1.2.840.113549.1.1.14', { hash: 'sha224', key: 'rsa' }],
  ['1.2.840.113549.1.1.11', { hash: 'sha256', key: 'rsa' }],
  ['1.2.840.113549.1.1.12', { hash: 'sha384', key: 'rsa' }],
  ['1.2.840.113549.1.1.13', { hash: 'sha512', key: 'rsa' }],
  ['1.2.840.10045.4.1', { hash: 'sha1', key: 'ec' }],
  ['1.2.840.10045.4.3.2', { hash: 'sha256', key: 'ec' }],
  ['1.2.840.10045.4.3.3', { hash: 'sha384', key: 'ec' }],
  ['1.2.840.10045.4.3.4', { hash: 'sha512', key: 'ec' }],
]);

export function supportedAcAlgorithm(oid: string): boolean {
  return ALGORITHMS.has(oid);
}

export function acSignedBy(ac: AttributeCertificate, signer: ParsedCertificate): boolean {
  const alg = ALGORITHMS.get(ac.signatureAlgorithm);
  if (alg === undefined) return false;
  try {
    const key = signer.node.publicKey;
    if (key.asymmetricKeyType !== alg.key) return false;
    return verify(alg.hash, ac.signedBytes, key, ac.signature);
  } catch {
    return false;
  }
}
