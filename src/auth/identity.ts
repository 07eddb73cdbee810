/**
 * The authenticated caller as the transport layer establishes it: the end-entity
 * subject, proxy CNs stripped, in two forms. `owner` (RFC 4514, src/pki/rfc4514.ts) is
 * the owner key of jobs, delegations and pool leases: unambiguous. `dn` is the OpenSSL
 * one-line form (`/C=../O=../CN=..`), as A-REX records a job's owner: for display,
 * grid-mapfiles, configuration and accounting. A certificate whose one-line form reads
 * back as another name is refused, so among accepted callers the two forms match one to one.
 */
export interface X509Identity {
  readonly kind: 'x509';
  /** End-entity subject DN, one-line form. */
  readonly dn: string;
  /** End-entity subject, RFC 4514 form: the owner key. */
  readonly owner: string;
  /** Issuer (CA) of the end-entity certificate, one-line form. */
  readonly issuerDn: string;
  /** The client authenticated with an RFC 3820 (or legacy Globus) proxy. */
  readonly isProxy: boolean;
  /** Number of proxy certificates above the end-entity certificate. */
  readonly proxyDepth: number;
  /** A limited proxy is somewhere in the chain (Globus limited-proxy policy or `CN=limited proxy`). */
  readonly limited: boolean;
  /** Earliest notAfter of the chain, CA included: the credentials are useless after it. */
  readonly notAfter: Date;
  /** SHA-256 of the leaf certificate's DER, lower-case hex. */
  readonly leafFingerprint: string;
  /**
   * VOMS attributes of the proxy chain, present only when an attribute certificate was
   * found AND verified against the configured VOMS trust (vomsDir and the trusted CAs).
   */
  readonly voms?: VomsAttributes;
}

/**
 * Verified VOMS attributes: those of every attribute certificate (one per VO) of the
 * proxy that verified (src/auth/voms/verify-ac.ts); the first of them is the primary.
 */
export interface VomsAttributes {
  /** The VO of the primary attribute certificate, e.g. `atlas`. */
  readonly vo: string;
  /**
   * FQANs in the order the VOMS servers issued them, the primary AC's first (its first FQAN
   * is the primary one), e.g. `/atlas/Role=production/Capability=NULL`.
   */
  readonly fqans: readonly string[];
  /** Subject DN of the VOMS server that signed the primary attribute certificate, one-line form. */
  readonly serverDn: string;
  /** When the attributes end: the first attribute certificate to end, and never after the chain. */
  readonly notAfter: Date;
}

/**
 * A caller authenticated by a verified bearer token (src/auth/token). `owner` is its
 * owner key of jobs and delegations, `<iss>#<sub>`: an issuer is an https URL, which
 * has no fragment, so the first `#` separates the two, and no DN (always starting
 * with `/`) can equal it.
 */
export interface TokenIdentity {
  readonly kind: 'token';
  readonly owner: string;
  readonly issuer: string;
  readonly subject: string;
  /** `scope` claim, split on spaces. */
  readonly scopes: readonly string[];
  /** `wlcg.groups` claim, in the issuer's order. */
  readonly groups: readonly string[];
  /** `exp` claim. */
  readonly notAfter: Date;
  /** The token itself (a secret: never logged, never echoed). */
  readonly token: string;
}

export type Identity = X509Identity | TokenIdentity;

/** Outcome of authenticating a connection (its client certificate). */
export type AuthResult =
  | { readonly ok: true; readonly identity: X509Identity }
  | {
      readonly ok: false;
      readonly code: 'CE_ERR_AUTH_NO_CREDENTIALS' | 'CE_ERR_AUTH_CERT_INVALID' | 'CE_ERR_AUTH_SUBJECT_AMBIGUOUS';
      readonly reason: string;
    };
