/**
 * What the match rules see of a caller: a certificate (DN, CA, VOMS FQANs) or a
 * verified bearer token (issuer, subject, scopes, groups). `token` rules match tokens
 * only, certificate rules certificates only.
 */
import type { Identity } from '../auth/identity.js';
import { parseFqanPattern, type Fqan } from '../auth/voms/fqan.js';

export interface X509Subject {
  readonly kind: 'x509';
  readonly dn: string;
  readonly issuerDn: string;
  /** Verified FQANs as issued (empty without a VOMS attribute certificate). */
  readonly fqans: readonly string[];
  /** The same, parsed (an unparsable FQAN is left out: it can match no rule). */
  readonly parsedFqans: readonly Fqan[];
}

export interface TokenSubject {
  readonly kind: 'token';
  readonly issuer: string;
  readonly subject: string;
  readonly scopes: readonly string[];
  readonly groups: readonly string[];
}

export type AuthzSubject = X509Subject | TokenSubject;

export function subjectOfIdentity(id: Identity): AuthzSubject {
  if (id.kind === 'token')
    return { kind: 'token', issuer: id.issuer, subject: id.subject, scopes: id.scopes, groups: id.groups };
  return withFqans(
    { kind: 'x509', dn: id.dn, issuerDn: id.issuerDn, fqans: [], parsedFqans: [] },
    id.voms?.fqans ?? [],
  );
}

/** The certificate subject with other FQANs (the web's browser rule: those last seen with it). */
export function withFqans(s: X509Subject, fqans: readonly string[]): X509Subject {
  const parsedFqans: Fqan[] = [];
  for (const f of fqans) {
    const p = parseFqanPattern(f);
    if (typeof p !== 'string') parsedFqans.push(p);
  }
  return { ...s, fqans, parsedFqans };
}

/** Cache key: everything a decision depends on besides the configured files. */
export function subjectKey(s: AuthzSubject): string {
  return s.kind === 'x509'
    ? JSON.stringify(['x509', s.dn, s.issuerDn, s.fqans])
    : JSON.stringify(['token', s.issuer, s.subject, s.scopes, s.groups]);
}
