/**
 * The second step of an X.509 delegation: judging the signed certificate a client
 * PUTs. The body is PEM: the new proxy first, then the chain that issued it (the
 * ARC client, pyarcrest and sign_delegation.py send proxy + signer proxy + user
 * certificate). Checks, in this order, each refusal a 4xx with the reason:
 *
 *   1. there is a body, and it holds PEM certificates that parse;
 *   2. the first certificate is for a key we hold: the outstanding request's key, or
 *      (a retried PUT after a lost answer) the key of the current credential;
 *   3. the chain verifies against the trust store as a TLS client chain would
 *      (src/auth/x509-chain.ts: RFC 3820 proxy rules, CA path, validity now);
 *   4. its identity (end-entity DN, proxies stripped) is the caller's.
 *
 * A-REX checks none of this (it stores any PEM, even for the wrong key); a wrong
 * credential would only fail later, at data staging, far from its cause.
 */
import { ceError } from '../../errors/ce-error.js';
import { parseCertificate, pemBlocks } from '../../pki/certificate.js';
import type { TrustStore } from '../../pki/trust-store.js';
import { verifyClientChain } from '../../auth/x509-chain.js';
import { canonicalSpki } from './certificate-request.js';

export interface KeyCandidate {
  /** Canonical SPKI DER. */
  readonly key: Buffer;
  readonly source: 'request' | 'current';
}

export interface AcceptedChain {
  /** The certificates as sent, leaf first (DER). */
  readonly chainDer: Buffer[];
  /** Which held key the leaf certifies. */
  readonly matched: 'request' | 'current';
  /** Earliest notAfter along the verified chain: when the delegation stops being usable. */
  readonly notAfter: Date;
}

export function acceptDelegatedChain(body: Buffer, candidates: readonly KeyCandidate[], owner: string, trust: TrustStore, now: Date): AcceptedChain {
  const text = body.toString('latin1');
  if (text.trim() === '') throw ceError('CE_ERR_DELEG_EMPTY_BODY', 'Missing payload: the body must hold the signed proxy certificate and its chain (PEM)');
  const chainDer = pemBlocks(text);
  if (chainDer.length === 0) throw ceError('CE_ERR_DELEG_NOT_PEM', 'No PEM certificate in the request body (expected -----BEGIN CERTIFICATE----- blocks)');
  let leafSpki: Buffer;
  try {
    leafSpki = canonicalSpki(parseCertificate(chainDer[0] as Buffer).spkiDer);
  } catch {
    throw ceError('CE_ERR_DELEG_NOT_PEM', 'The first certificate in the request body cannot be parsed');
  }

  if (candidates.length === 0) {
    throw ceError('CE_ERR_DELEG_KEY_MISMATCH', 'No certificate request is outstanding for this delegation; ask for one with action=renew');
  }
  const match = candidates.find((c) => c.key.equals(leafSpki));
  if (match === undefined) {
    throw ceError('CE_ERR_DELEG_KEY_MISMATCH', 'Certificate does not match the delegation request: it certifies another public key (sign the request this delegation answered with)');
  }

  const r = verifyClientChain(chainDer, trust, now);
  if (!r.ok) {
    if (r.kind === 'expired' || r.kind === 'not-yet-valid') throw ceError('CE_ERR_DELEG_EXPIRED', `Delegated credential refused: ${r.reason}`);
    throw ceError('CE_ERR_DELEG_CHAIN_REFUSED', `Delegated certificate chain refused: ${r.reason}`);
  }
  if (r.identity.dn !== owner) {
    throw ceError('CE_ERR_DELEG_WRONG_IDENTITY', `Delegated credential belongs to ${r.identity.dn}, not to the caller ${owner}`);
  }
  return { chainDer, matched: match.source, notAfter: r.identity.notAfter };
}
