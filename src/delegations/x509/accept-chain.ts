/**
 * The second step of an X.509 delegation: judging the signed certificate a client
 * PUTs. The body is PEM: the new proxy first, then the chain that issued it (the
 * ARC client, pyarcrest and sign_delegation.py send proxy + signer proxy + user
 * certificate). A body with the proxy alone is completed, as A-REX completes it, with
 * the chain the caller presented on its TLS connection: the proxy must then be issued
 * (name and signature) by the certificate the caller authenticated with. Checks, in
 * this order, each refusal a 4xx with the reason:
 *
 *   1. there is a body, and it holds PEM certificates that parse;
 *   2. the first certificate is for a key we hold: the outstanding request's key, or
 *      (a retried PUT after a lost answer) the key of the current credential;
 *   3. a lone proxy is issued by the caller's own certificate (and gets its chain);
 *   4. the chain verifies against the trust store as a TLS client chain would
 *      (src/auth/x509-chain.ts: RFC 3820 proxy rules, CA path, CRLs, validity now);
 *   5. its identity (end-entity subject, proxies stripped) is the caller's. A bearer-token
 *      caller has no DN: any identity the chain verifies as is accepted, since signing
 *      the request (step 2) took that proxy's private key (clients authenticate with
 *      a token and delegate a proxy for data staging).
 *
 * A-REX checks none of this (it stores any PEM, even for the wrong key); a wrong
 * credential would only fail later, at data staging, far from its cause.
 */
import { ceError } from '../../errors/ce-error.js';
import { parseCertificate, pemBlocks, type ParsedCertificate } from '../../pki/certificate.js';
import { sameName, toOneline } from '../../pki/dn.js';
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

/**
 * `callerChain`: the certificates the caller presented on its connection (leaf first,
 * as read from the TLS socket; verified when the connection was authenticated), or
 * empty when it has none.
 */
export function acceptDelegatedChain(
  body: Buffer,
  candidates: readonly KeyCandidate[],
  /** The owner key (RFC 4514 subject) the chain must have; undefined for a bearer-token caller (any). */
  owner: string | undefined,
  trust: TrustStore,
  now: Date,
  callerChain: readonly Uint8Array[] = [],
): AcceptedChain {
  const text = body.toString('latin1');
  if (text.trim() === '')
    throw ceError(
      'CE_ERR_DELEG_EMPTY_BODY',
      'Missing payload: the body must hold the signed proxy certificate and its chain (PEM)',
    );
  const chainDer = pemBlocks(text);
  if (chainDer.length === 0)
    throw ceError(
      'CE_ERR_DELEG_NOT_PEM',
      'No PEM certificate in the request body (expected -----BEGIN CERTIFICATE----- blocks)',
    );
  let leaf: ParsedCertificate;
  let leafSpki: Buffer;
  try {
    leaf = parseCertificate(chainDer[0] as Buffer);
    leafSpki = canonicalSpki(leaf.spkiDer);
  } catch {
    throw ceError('CE_ERR_DELEG_NOT_PEM', 'The first certificate in the request body cannot be parsed');
  }

  if (candidates.length === 0) {
    throw ceError(
      'CE_ERR_DELEG_KEY_MISMATCH',
      'No certificate request is outstanding for this delegation; ask for one with action=renew',
    );
  }
  const match = candidates.find((c) => c.key.equals(leafSpki));
  if (match === undefined) {
    throw ceError(
      'CE_ERR_DELEG_KEY_MISMATCH',
      'Certificate does not match the delegation request: it certifies another public key (sign the request this delegation answered with)',
    );
  }

  const chain = chainDer.length === 1 ? completeFromCaller(leaf, callerChain) : chainDer;
  const r = verifyClientChain(chain, trust, now);
  if (!r.ok) {
    if (r.kind === 'expired' || r.kind === 'not-yet-valid')
      throw ceError('CE_ERR_DELEG_EXPIRED', `Delegated credential refused: ${r.reason}`);
    throw ceError('CE_ERR_DELEG_CHAIN_REFUSED', `Delegated certificate chain refused: ${r.reason}`);
  }
  // Owners compare on the unambiguous form (src/pki/rfc4514.ts); both are named in it.
  if (owner !== undefined && r.identity.owner !== owner) {
    throw ceError(
      'CE_ERR_DELEG_WRONG_IDENTITY',
      `Delegated credential belongs to ${r.identity.owner}, not to the caller ${owner}`,
    );
  }
  return { chainDer: chain, matched: match.source, notAfter: r.identity.notAfter };
}

/** The lone proxy followed by the caller's chain, if the caller's certificate issued it. */
function completeFromCaller(proxy: ParsedCertificate, callerChain: readonly Uint8Array[]): Buffer[] {
  const [first] = callerChain;
  const hint = 'send the proxy followed by the chain that issued it';
  if (first === undefined) {
    throw ceError(
      'CE_ERR_DELEG_NOT_CALLERS_PROXY',
      `The body holds only the proxy certificate and the connection carries no client certificate to complete its chain with: ${hint}`,
    );
  }
  const callerLeaf = parseCertificate(first);
  // The full proxy rules (subject extends the issuer's by one CN, ...) are checked on
  // the completed chain; here only that this is the caller's own link.
  if (!sameName(proxy.issuer, callerLeaf.subject)) {
    throw ceError(
      'CE_ERR_DELEG_NOT_CALLERS_PROXY',
      `The proxy certificate is issued by ${toOneline(proxy.issuer)}, not by the certificate this connection authenticated with (${callerLeaf.subjectOneline}): ${hint}`,
    );
  }
  let signed: boolean;
  try {
    signed = proxy.node.verify(callerLeaf.node.publicKey);
  } catch {
    signed = false;
  }
  if (!signed) {
    throw ceError(
      'CE_ERR_DELEG_NOT_CALLERS_PROXY',
      `The proxy certificate is not signed by the key of the certificate this connection authenticated with (${callerLeaf.subjectOneline})`,
    );
  }
  return [Buffer.from(proxy.der), ...callerChain.map((d) => Buffer.from(d))];
}
