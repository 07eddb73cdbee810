/**
 * The stored form of an X.509 delegation: a proxy file as `arcproxy` writes one —
 * the delegated proxy certificate, its private key (PKCS#1 `RSA PRIVATE KEY`, what
 * GSI tools expect), then the rest of the chain as the client sent it. Any tool that
 * takes X509_USER_PROXY (and Node's TLS client, for data staging) can use it as is.
 */
import { createPrivateKey } from 'node:crypto';
import { pemBlocks, toPem } from '../../pki/certificate.js';

export function composeProxyFile(chainDer: readonly Uint8Array[], keyPkcs8Pem: string): string {
  const [leaf, ...rest] = chainDer;
  if (leaf === undefined) throw new Error('composeProxyFile: empty chain');
  const ko = createPrivateKey(keyPkcs8Pem);
  const keyPem = (
    ko.asymmetricKeyType === 'rsa'
      ? ko.export({ type: 'pkcs1', format: 'pem' })
      : ko.export({ type: 'pkcs8', format: 'pem' })
  ) as string;
  return toPem(leaf) + keyPem + rest.map((c) => toPem(c)).join('');
}

/** The certificates of a proxy file, in order, as PEM (what action=get shows: no key). */
export function certificatesPem(proxyFile: string): string {
  return pemBlocks(proxyFile)
    .map((d) => toPem(d))
    .join('');
}

/** The private key block of a proxy file, as PEM. */
export function keyPem(proxyFile: string): string {
  const m = /-----BEGIN ((?:RSA |EC )?PRIVATE KEY)-----[A-Za-z0-9+/=\s]*?-----END \1-----\n?/.exec(proxyFile);
  if (m === null) throw new Error('proxy file without a private key');
  return m[0].endsWith('\n') ? m[0] : `${m[0]}\n`;
}
