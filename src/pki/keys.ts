/**
 * Key pairs for certificates and proxies: generated with WebCrypto (RSA 2048,
 * SHA-256 signatures) and moved in and out of PEM through node:crypto KeyObjects.
 */
import { KeyObject, createPrivateKey, webcrypto } from 'node:crypto';
import type { CryptoKey, CryptoKeyPair } from './x509-lib.js';

const RSA_SIGN = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const CURVES: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

export async function generateRsaKeyPair(modulusLength = 2048): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey({ ...RSA_SIGN, modulusLength, publicExponent: new Uint8Array([1, 0, 1]) }, true, [
    'sign',
    'verify',
  ]);
}

/** PKCS#8 PEM (`BEGIN PRIVATE KEY`), what `openssl req -nodes` writes. */
export function privateKeyToPem(key: CryptoKey): string {
  return keyObjectOf(key).export({ type: 'pkcs8', format: 'pem' }) as string;
}

/**
 * The traditional `BEGIN RSA PRIVATE KEY` form (PKCS#1) for RSA keys, as GSI tools
 * write the key inside proxy files; other key types stay PKCS#8.
 */
export function privateKeyToProxyPem(key: CryptoKey): string {
  const ko = keyObjectOf(key);
  return (
    ko.asymmetricKeyType === 'rsa'
      ? ko.export({ type: 'pkcs1', format: 'pem' })
      : ko.export({ type: 'pkcs8', format: 'pem' })
  ) as string;
}

export function keyObjectOf(key: CryptoKey): KeyObject {
  return KeyObject.from(key);
}

/**
 * Import a PEM private key (PKCS#1, PKCS#8 or SEC1; the key block of a proxy file
 * also works, other blocks in the text are skipped) as a WebCrypto signing key.
 */
export async function importSigningKeyPem(pem: string): Promise<CryptoKey> {
  const ko = createPrivateKey(pem);
  const der = ko.export({ type: 'pkcs8', format: 'der' });
  if (ko.asymmetricKeyType === 'rsa') return webcrypto.subtle.importKey('pkcs8', der, RSA_SIGN, true, ['sign']);
  if (ko.asymmetricKeyType === 'ec') {
    const curve = CURVES[ko.asymmetricKeyDetails?.namedCurve ?? ''];
    if (curve !== undefined)
      return webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, true, ['sign']);
  }
  throw new Error(`unsupported private key type ${ko.asymmetricKeyType ?? 'unknown'}`);
}

/** SPKI DER of a public key. */
export async function spkiOf(key: CryptoKey): Promise<Buffer> {
  return Buffer.from(await webcrypto.subtle.exportKey('spki', key));
}
