/**
 * The first step of an X.509 delegation: a fresh RSA key pair made on the server and
 * a PKCS#10 request for its public key. The request has an empty subject (the signer
 * names the proxy: its own subject + `CN=<serial>`), version 0 (python-cryptography,
 * i.e. pyarcrest, refuses A-REX 6's version-2 requests) and a SHA-256 signature, which
 * is proof of possession for clients that check it. The private key never leaves the
 * server.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { x509 } from '../../pki/x509-lib.js';
import { privateKeyToPem } from '../../pki/keys.js';
import type { CryptoKeyPair } from '../../pki/x509-lib.js';

export interface CertificateRequest {
  /** PKCS#8 PEM of the private key: a secret, goes to a 0600 file only. */
  readonly keyPem: string;
  /** PEM `CERTIFICATE REQUEST`, the body of the 201 answer. */
  readonly csrPem: string;
}

/** A request for `keys`, a pair made for this request alone (key-pool.ts). */
export async function makeCertificateRequest(keys: CryptoKeyPair): Promise<CertificateRequest> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    keys,
    signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  });
  return {
    keyPem: privateKeyToPem(keys.privateKey),
    csrPem: csr.toString('pem').replace(/\r\n/g, '\n').replace(/\n?$/, '\n'),
  };
}

/**
 * The public key of a PEM private key, as canonical SPKI DER. Certificates encode the
 * same key in whatever way their signer chose; comparing canonical forms (both
 * re-exported by OpenSSL) makes the match independent of that.
 */
export function publicKeyOfPrivatePem(keyPem: string): Buffer {
  return createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
}

/** Canonical SPKI DER of a certificate's subjectPublicKeyInfo. */
export function canonicalSpki(spkiDer: Uint8Array): Buffer {
  return createPublicKey({ key: Buffer.from(spkiDer), format: 'der', type: 'spki' }).export({
    type: 'spki',
    format: 'der',
  });
}
