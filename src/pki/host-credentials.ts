/**
 * The host certificate (optionally followed by its intermediate CAs) and its private key,
 * read from their PEM files and checked as a pair before the listener is given them: at
 * start, and again on SIGHUP after a renewal. A renewal is often done in two steps (the
 * key, then the certificate, or the other way round), so a pair that does not belong
 * together is refused with the reason, and the caller keeps the pair it has.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseCertificate, pemBlocks, type ParsedCertificate } from './certificate.js';
import { PkiError } from './pki-error.js';

export interface HostCredentials {
  readonly certPem: string;
  readonly keyPem: string;
  /** The host certificate's subject (OpenSSL one-line form) and validity end. */
  readonly subject: string;
  readonly notAfter: Date;
  /** SHA-256 fingerprint of the host certificate (hex, lower case). */
  readonly fingerprint: string;
}

/**
 * Read and check the pair. Throws PkiError naming the file and what is wrong: unreadable,
 * no certificate, a key that does not parse, a key that is not the certificate's, or a
 * certificate outside its validity period at `now`.
 */
export function readHostCredentials(certFile: string, keyFile: string, now: number = Date.now()): HostCredentials {
  const certPem = readText(certFile, 'host certificate');
  const keyPem = readText(keyFile, 'host key');
  const [leafDer] = pemBlocks(certPem);
  if (leafDer === undefined) throw new PkiError(`host certificate ${certFile}: no PEM certificate in the file`);
  let leaf: X509Certificate;
  let parsed: ParsedCertificate;
  try {
    leaf = new X509Certificate(leafDer);
    parsed = parseCertificate(leafDer);
  } catch (e) {
    throw new PkiError(`host certificate ${certFile}: not a valid certificate (${(e as Error).message})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (e) {
    throw new PkiError(`host key ${keyFile}: not a usable private key (${(e as Error).message})`);
  }
  if (!leaf.checkPrivateKey(key))
    throw new PkiError(
      `host key ${keyFile} is not the key of the host certificate ${certFile} (${parsed.subjectOneline})`,
    );
  const { notBefore, notAfter } = parsed;
  if (now < notBefore.getTime())
    throw new PkiError(`host certificate ${certFile} is not valid before ${notBefore.toISOString()}`);
  if (now > notAfter.getTime()) throw new PkiError(`host certificate ${certFile} expired at ${notAfter.toISOString()}`);
  return {
    certPem,
    keyPem,
    subject: parsed.subjectOneline,
    notAfter,
    fingerprint: parsed.fingerprint256,
  };
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new PkiError(`${what} ${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
