/**
 * The delegation vocabulary shared by the service, the REST resources, the wiring, and
 * below them the store (a delegation's type) and local accounts (a job's credential copy). A delegation is owned by one identity (the end-entity DN of the caller that
 * created it) and holds at most one current credential plus, for X.509, at most one
 * outstanding certificate request (the key pair whose public half was handed out).
 */

export type DelegationType = 'x509' | 'jwt';
export const DELEGATION_TYPES: readonly DelegationType[] = ['x509', 'jwt'];

export interface DelegationListItem {
  readonly id: string;
  readonly type: DelegationType;
}

/**
 * A credential as data staging presents it. Structurally the same as the stager's
 * `Credential` (src/staging/credentials.ts), so the wiring can hand this service to
 * the stager as its credential source.
 */
export type DelegatedCredential =
  | { readonly kind: 'x509'; readonly certChainPem: string; readonly keyPem: string }
  | { readonly kind: 'jwt'; readonly token: string };

/** What `action=get` answers: the public part of an X.509 delegation, or the token. */
export type StoredPublicPart =
  { readonly type: 'x509'; readonly pem: string } | { readonly type: 'jwt'; readonly token: string };

/** Settings of the service, from the `delegations` configuration section. */
export interface DelegationSettings {
  readonly keyBits: number;
  readonly requestLifetimeMs: number;
  readonly expiredRetentionMs: number;
  readonly maxPerUser: number;
  readonly maxTokenBytes: number;
}
