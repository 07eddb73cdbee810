/**
 * Verification of a TLS client's certificate chain, RFC 3820 proxies included.
 *
 * Node's TLS (OpenSSL without X509_V_FLAG_ALLOW_PROXY_CERTS, which Node cannot set)
 * refuses proxy certificates, so the listener accepts any certificate and the whole
 * chain is verified here. The chain is given leaf first, each certificate followed
 * by its issuer:
 *
 *   [proxy_n, ..., proxy_1,] end-entity, [intermediate CAs...,] [trusted CA]
 *
 * 1. Proxies (RFC 3820 3.x; OpenSSL's proxy rules): each is signed by the key of the
 *    next certificate and names it as issuer; carries a critical proxyCertInfo; its
 *    subject is the issuer's subject plus exactly one CN RDN; is not a CA and has no
 *    alternative names; the signer's keyUsage, if any, allows digitalSignature;
 *    pCPathLenConstraint is honoured. Legacy Globus (GT2) proxies, `CN=proxy` and
 *    `CN=limited proxy` without the extension, are recognised by that name rule.
 * 2. The end-entity certificate chains to a trusted CA: every link's signature,
 *    validity, CA flag and keyCertSign usage, path length constraints.
 * 3. Every certificate must be valid at `now`; no unknown critical extension.
 * 4. No CA-issued certificate of the path (end-entity, intermediates, and trusted
 *    intermediates up to their root) is revoked by a CRL of the CA directory, and no
 *    CRL that covers one is past its nextUpdate (src/pki/revocation.ts). Proxies are
 *    not in CRLs: they are signed by their owners.
 *
 * 5. The end-entity subject's one-line form reads back as that subject and no other
 *    (src/pki/rfc4514.ts): else it also names another user (`O=X/OU=Y` as one value
 *    prints as `O=X`, `OU=Y`), and the one-line form keys grid-mapfiles and the
 *    configuration.
 *
 * The result is a typed refusal with a human-readable reason (names and dates only,
 * never key material), or the identity: the end-entity subject, one-line and RFC 4514.
 */
import { OID_CN, avaText, sameName, toOneline, type Rdn } from '../pki/dn.js';
import { KU, OID, parseCertificate, type ParsedCertificate } from '../pki/certificate.js';
import { PROXY_POLICY } from '../pki/proxy-cert-info.js';
import { onelineIsAmbiguous, rfc4514Of } from '../pki/rfc4514.js';
import { isCaCertificate, type TrustStore } from '../pki/trust-store.js';
import type { X509Identity } from './identity.js';

export type RefusalKind =
  | 'no-certificate'
  | 'malformed'
  | 'expired'
  | 'not-yet-valid'
  | 'unknown-ca'
  | 'broken-chain'
  | 'bad-signature'
  | 'bad-proxy'
  | 'self-signed'
  | 'not-allowed'
  | 'revoked'
  | 'ambiguous-subject';

export type ChainResult =
  | { readonly ok: true; readonly identity: X509Identity }
  | { readonly ok: false; readonly kind: RefusalKind; readonly reason: string };

/** Longest chain we look at (proxies + end-entity + CAs); real ones have 2-6. */
export const MAX_CHAIN_LENGTH = 16;

/** Critical extensions we understand well enough to accept. */
const UNDERSTOOD_CRITICAL: ReadonlySet<string> = new Set([
  OID.basicConstraints,
  OID.keyUsage,
  OID.extKeyUsage,
  OID.subjectAltName,
  OID.issuerAltName,
  OID.proxyCertInfo,
  OID.subjectKeyId,
  '2.5.29.35', // authorityKeyIdentifier
  '2.5.29.32', // certificatePolicies (no policy processing is requested, as OpenSSL by default)
  '2.5.29.36', // policyConstraints
  '2.5.29.54', // inhibitAnyPolicy
]);

/** md2/md4/md5 signatures are forgeable; SHA-1 and up are accepted as OpenSSL's default level does. */
const WEAK_SIGNATURES: ReadonlySet<string> = new Set([
  '1.2.840.113549.1.1.2',
  '1.2.840.113549.1.1.3',
  '1.2.840.113549.1.1.4',
]);

class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    reason: string,
  ) {
    super(reason);
  }
}
const refuse = (kind: RefusalKind, reason: string): never => {
  throw new Refusal(kind, reason);
};

export interface VerifyChainOptions {
  /**
   * Skip the TLS-client extended key usage check: for a certificate that signs
   * something other than a TLS handshake (a VOMS server signing attribute certificates).
   */
  readonly anyPurpose?: boolean;
}

/** Verify a client chain (DER, leaf first) against the trust store at time `now`. */
export function verifyClientChain(
  chainDer: readonly Uint8Array[],
  trust: TrustStore,
  now: Date = new Date(),
  opts: VerifyChainOptions = {},
): ChainResult {
  try {
    return { ok: true, identity: verify(chainDer, trust, now, opts) };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, kind: e.kind, reason: e.message };
    throw e;
  }
}

function verify(chainDer: readonly Uint8Array[], trust: TrustStore, now: Date, opts: VerifyChainOptions): X509Identity {
  if (chainDer.length === 0) refuse('no-certificate', 'no client certificate was presented');
  if (chainDer.length > MAX_CHAIN_LENGTH) refuse('malformed', `certificate chain longer than ${MAX_CHAIN_LENGTH}`);
  const chain = chainDer.map((der, i) => {
    try {
      return parseCertificate(der);
    } catch (e) {
      return refuse(
        'malformed',
        `certificate ${i} of the chain cannot be parsed (${e instanceof Error ? e.message : 'error'})`,
      );
    }
  });
  const t = now.getTime();

  // 1. Proxies, from the leaf down to the end-entity certificate.
  let i = 0;
  let limited = false;
  while (i < chain.length && isProxy(chain[i] as ParsedCertificate, chain[i + 1])) {
    const proxy = chain[i] as ParsedCertificate;
    const signer = chain[i + 1];
    const what = i === 0 ? 'the proxy certificate' : `proxy certificate ${i}`;
    if (signer === undefined)
      refuse('broken-chain', `the issuer of ${what} (${onelineOfIssuer(proxy)}) was not presented`);
    checkProxy(proxy, signer as ParsedCertificate, what, i);
    if (proxy.proxyCertInfo?.policyLanguage === PROXY_POLICY.limited || isLegacyLimited(proxy)) limited = true;
    checkCommon(proxy, what, t);
    i++;
  }
  const proxyDepth = i;

  // 2. The end-entity certificate.
  const eec = chain[i] as ParsedCertificate;
  const eecWhat =
    proxyDepth > 0 ? `the user certificate ${eec.subjectOneline}` : `the client certificate ${eec.subjectOneline}`;
  if (eec.proxyCertInfo !== undefined || eec.extensions.has(OID.proxyCertInfoDraft))
    refuse('broken-chain', `${eecWhat} is a proxy but its issuer was not presented`);
  if (isSelfSigned(eec)) {
    if (trust.isAnchor(eec)) refuse('not-allowed', `${eecWhat} is a trusted CA itself, not a user certificate`);
    refuse('self-signed', `${eecWhat} is self-signed and not issued by a trusted CA`);
  }
  if (eec.basicConstraints?.ca === true)
    refuse('not-allowed', `${eecWhat} is a CA certificate, not a user certificate`);
  if (eec.keyUsage !== undefined && !eec.keyUsage(KU.digitalSignature))
    refuse('not-allowed', `the key usage of ${eecWhat} does not allow digital signatures`);
  if (
    opts.anyPurpose !== true &&
    eec.extKeyUsage !== undefined &&
    !eec.extKeyUsage.includes(OID.ekuClientAuth) &&
    !eec.extKeyUsage.includes(OID.ekuAny)
  ) {
    refuse('not-allowed', `${eecWhat} is not valid for TLS client authentication (extended key usage)`);
  }
  checkCommon(eec, eecWhat, t);

  // 3. The CA path from the end-entity certificate to a trust anchor.
  let notAfter = Math.min(...chain.slice(0, i + 1).map((c) => c.notAfter.getTime()));
  let current = eec;
  let k = i;
  let intermediates = 0;
  for (;;) {
    const next = chain[k + 1];
    let anchor: ParsedCertificate | undefined;
    if (next !== undefined) {
      if (!sameName(current.issuer, next.subject)) {
        refuse(
          'broken-chain',
          `the chain is out of order or incomplete: certificate ${k + 1} (${next.subjectOneline}) is not the issuer of ${current.subjectOneline}`,
        );
      }
      if (!signedBy(current, next))
        refuse(
          'bad-signature',
          `the signature of ${current.subjectOneline} does not verify with the key of ${next.subjectOneline}`,
        );
      checkRevocation(current, next, trust, t);
      if (trust.isAnchor(next)) {
        anchor = next;
        if (k + 2 < chain.length)
          refuse('broken-chain', `certificates follow the trusted CA ${next.subjectOneline} in the chain`);
      } else {
        // An intermediate CA sent by the client: it must be a CA and is checked like one.
        const nextWhat = `the CA certificate ${next.subjectOneline}`;
        checkCa(next, nextWhat, intermediates, t);
        if (isSelfSigned(next)) refuse('unknown-ca', `the chain ends at ${nextWhat}, which is not trusted`);
        notAfter = Math.min(notAfter, next.notAfter.getTime());
        intermediates++;
        current = next;
        k++;
        continue;
      }
    } else {
      const candidates = trust.candidates(current.issuer);
      if (candidates.length === 0)
        refuse(
          'unknown-ca',
          `${current.subjectOneline} is issued by ${onelineOfIssuer(current)}, which is not a trusted CA and was not presented`,
        );
      anchor = candidates.find((c) => signedBy(current, c));
      if (anchor === undefined)
        refuse('unknown-ca', `${current.subjectOneline} is not signed by the trusted CA ${onelineOfIssuer(current)}`);
    }
    const a = anchor as ParsedCertificate;
    if (next === undefined) checkRevocation(current, a, trust, t);
    checkCa(a, `the trusted CA ${a.subjectOneline}`, intermediates, t);
    notAfter = Math.min(notAfter, a.notAfter.getTime());
    checkAnchorRevocation(a, trust, t);
    break;
  }

  // 5. The identity must be unambiguous in the form grid-mapfiles and the configuration use.
  if (onelineIsAmbiguous(eec.subject, eec.subjectOneline))
    refuse(
      'ambiguous-subject',
      `the subject of the ${proxyDepth > 0 ? 'user' : 'client'} certificate is ambiguous in one-line form (${eec.subjectOneline} also reads as another name): a value holds '/' or '+' followed by an attribute name and '=', or '\\x' and two hex digits; ask the CA for a subject without them`,
    );

  return {
    kind: 'x509',
    dn: eec.subjectOneline,
    owner: rfc4514Of(eec.subject),
    issuerDn: onelineOfIssuer(eec),
    isProxy: proxyDepth > 0,
    proxyDepth,
    limited,
    notAfter: new Date(notAfter),
    leafFingerprint: (chain[0] as ParsedCertificate).fingerprint256,
  };
}

// ---------------------------------------------------------------- proxies

function isProxy(c: ParsedCertificate, next: ParsedCertificate | undefined): boolean {
  if (c.proxyCertInfo !== undefined || c.extensions.has(OID.proxyCertInfoDraft)) return true;
  // Legacy Globus proxy: no extension, `CN=proxy` / `CN=limited proxy` appended to the
  // subject of a non-CA issuer that is presented next.
  const last = lastCn(c.subject);
  if (last !== 'proxy' && last !== 'limited proxy') return false;
  return (
    next !== undefined &&
    next.basicConstraints?.ca !== true &&
    sameName(c.issuer, next.subject) &&
    sameName(c.subject.slice(0, -1), c.issuer)
  );
}

/**
 * Whether a certificate has the shape of a legacy Globus (GT2) proxy on its own: no
 * proxyCertInfo, and a subject that is its issuer's name plus `CN=proxy` or
 * `CN=limited proxy`. (Whether it is one depends on the certificate presented after it,
 * as `isProxy` checks; this is for callers that have not got that one.)
 */
export function hasLegacyProxyShape(c: ParsedCertificate): boolean {
  if (c.proxyCertInfo !== undefined) return false;
  const last = lastCn(c.subject);
  return (last === 'proxy' || last === 'limited proxy') && sameName(c.subject.slice(0, -1), c.issuer);
}

function isLegacyLimited(c: ParsedCertificate): boolean {
  return c.proxyCertInfo === undefined && lastCn(c.subject) === 'limited proxy';
}

function checkProxy(proxy: ParsedCertificate, signer: ParsedCertificate, what: string, index: number): void {
  if (proxy.extensions.has(OID.proxyCertInfoDraft) && proxy.proxyCertInfo === undefined) {
    refuse('bad-proxy', `${what} is a pre-RFC 3820 (draft) proxy, which is not supported`);
  }
  if (!sameName(proxy.issuer, signer.subject)) {
    refuse(
      'broken-chain',
      `the chain is out of order or incomplete: certificate ${index + 1} (${signer.subjectOneline}) is not the issuer of ${what}`,
    );
  }
  if (!signedBy(proxy, signer))
    refuse('bad-signature', `${what} is not signed by the key of its issuer ${signer.subjectOneline}`);
  const info = proxy.proxyCertInfo;
  if (info !== undefined && proxy.extensions.get(OID.proxyCertInfo)?.critical !== true)
    refuse('bad-proxy', `the proxyCertInfo extension of ${what} is not critical`);
  // RFC 3820 3.4: subject = issuer subject + one RDN; OpenSSL requires it to be a single CN.
  const subj = proxy.subject;
  const lastRdn = subj[subj.length - 1];
  if (
    subj.length !== proxy.issuer.length + 1 ||
    !sameName(subj.slice(0, -1), proxy.issuer) ||
    lastRdn === undefined ||
    lastRdn.length !== 1 ||
    lastRdn[0]?.oid !== OID_CN
  ) {
    refuse(
      'bad-proxy',
      `the subject of ${what} (${proxy.subjectOneline}) does not extend its issuer's subject (${signer.subjectOneline}) by one CN`,
    );
  }
  if (info === undefined && lastCn(subj) !== 'proxy' && lastCn(subj) !== 'limited proxy')
    refuse('bad-proxy', `${what} is neither an RFC 3820 nor a legacy proxy`);
  if (proxy.basicConstraints?.ca === true) refuse('bad-proxy', `${what} claims to be a CA`);
  if (proxy.extensions.has(OID.subjectAltName) || proxy.extensions.has(OID.issuerAltName))
    refuse('bad-proxy', `${what} has alternative names, which proxies must not have`);
  if (signer.keyUsage !== undefined && !signer.keyUsage(KU.digitalSignature))
    refuse('bad-proxy', `the key usage of ${signer.subjectOneline} does not allow it to sign proxies`);
  if (info !== undefined) {
    if (info.policyLanguage === PROXY_POLICY.independent)
      refuse('not-allowed', `${what} is an independent proxy, which carries no rights of its issuer`);
    if (info.policyLanguage !== PROXY_POLICY.inheritAll && info.policyLanguage !== PROXY_POLICY.limited) {
      refuse('not-allowed', `${what} has an unsupported proxy policy language ${info.policyLanguage}`);
    }
    // The constraint counts the proxies that may follow (be signed below) this one.
    if (info.pathLen !== undefined && index > info.pathLen)
      refuse('bad-proxy', `${what} allows ${info.pathLen} further proxies but ${index} follow it`);
  }
}

// ---------------------------------------------------------------- CAs and common checks

function checkCa(ca: ParsedCertificate, what: string, below: number, t: number): void {
  if (!isCaCertificate(ca)) refuse('broken-chain', `${what} is not a CA certificate but appears as an issuer`);
  if (ca.keyUsage !== undefined && !ca.keyUsage(KU.keyCertSign))
    refuse('not-allowed', `the key usage of ${what} does not allow signing certificates`);
  const pathLen = ca.basicConstraints?.pathLen;
  if (pathLen !== undefined && below > pathLen)
    refuse('not-allowed', `${what} allows ${pathLen} intermediate CAs below it but the chain has ${below}`);
  checkCommon(ca, what, t);
}

function checkCommon(c: ParsedCertificate, what: string, t: number): void {
  if (t < c.notBefore.getTime()) refuse('not-yet-valid', `${what} is not valid before ${c.notBefore.toISOString()}`);
  if (t > c.notAfter.getTime()) refuse('expired', `${what} expired at ${c.notAfter.toISOString()}`);
  for (const [oid, e] of c.extensions) {
    if (e.critical && !UNDERSTOOD_CRITICAL.has(oid))
      refuse('not-allowed', `${what} has an unsupported critical extension ${oid}`);
  }
}

// ---------------------------------------------------------------- revocation

function checkRevocation(c: ParsedCertificate, issuer: ParsedCertificate, trust: TrustStore, t: number): void {
  const r = trust.revocation(c, issuer, t);
  if (r === undefined) return;
  if (r.state === 'revoked')
    refuse('revoked', `${c.subjectOneline} was revoked by its CA ${r.by} on ${r.at.toISOString()}`);
  refuse(
    'revoked',
    `the revocation list of the CA ${r.by} expired at ${r.at.toISOString()}, so ${c.subjectOneline} cannot be checked (the CA directory's CRLs are not being updated)`,
  );
}

/** A trusted intermediate CA is checked against its own issuer's CRL, up to a root. */
function checkAnchorRevocation(anchor: ParsedCertificate, trust: TrustStore, t: number): void {
  let c = anchor;
  // Self-issued means a root here (it is trusted; no signature check needed to stop).
  for (let depth = 0; depth < MAX_CHAIN_LENGTH && !sameName(c.subject, c.issuer); depth++) {
    const parent = trust.candidates(c.issuer).find((p) => p !== c && signedBy(c, p));
    if (parent === undefined) return;
    checkRevocation(c, parent, trust, t);
    c = parent;
  }
}

function signedBy(c: ParsedCertificate, issuer: ParsedCertificate): boolean {
  if (WEAK_SIGNATURES.has(c.signatureAlgorithm)) return false;
  try {
    return c.node.verify(issuer.node.publicKey);
  } catch {
    return false;
  }
}

function isSelfSigned(c: ParsedCertificate): boolean {
  return sameName(c.subject, c.issuer) && signedBy(c, c);
}

function lastCn(rdns: readonly Rdn[]): string | undefined {
  const last = rdns[rdns.length - 1];
  const ava = last?.length === 1 ? last[0] : undefined;
  return ava?.oid === OID_CN ? avaText(ava) : undefined;
}

function onelineOfIssuer(c: ParsedCertificate): string {
  return toOneline(c.issuer);
}
