/**
 * Where transfers get the job owner's delegated credential. The Stager asks at
 * transfer time (every attempt), so a delegation renewed while a job waits or retries
 * is used. X.509: the delegated proxy chain is presented as the TLS client
 * certificate; JWT: sent as `Authorization: Bearer` (over TLS only, and only to the
 * host named in the URL, never to a redirect target on another host).
 *
 * Credential material never appears in logs, errors or results; the Stager refers to
 * a credential by a fingerprint of it.
 */
import { createHash } from 'node:crypto';

export interface X509Credential {
  readonly kind: 'x509';
  /** PEM certificates: the proxy first, then the certificates that issued it (end-entity, intermediates). */
  readonly certChainPem: string;
  /** PEM private key of the first certificate. */
  readonly keyPem: string;
}

export interface JwtCredential {
  readonly kind: 'jwt';
  readonly token: string;
}

export type Credential = X509Credential | JwtCredential;

export interface CredentialSource {
  /**
   * The credential for a transfer: the file's or job's delegation, as stored now.
   * `delegationId` undefined = the job has none (the source may still return the
   * owner's default one). Resolve undefined for anonymous access.
   */
  credentialFor(delegationId: string | undefined, owner: string): Promise<Credential | undefined>;
}

/** A credential source that never has one: anonymous transfers only. */
export const anonymousCredentials: CredentialSource = {
  credentialFor: () => Promise.resolve(undefined),
};

/** Stable short id of a credential's material, for keying agents and for logs. */
export function credentialFingerprint(c: Credential | undefined): string {
  if (c === undefined) return 'anonymous';
  const h = createHash('sha256');
  if (c.kind === 'x509') h.update('x509\0').update(c.certChainPem).update('\0').update(c.keyPem);
  else h.update('jwt\0').update(c.token);
  return `${c.kind}:${h.digest('hex').slice(0, 16)}`;
}
