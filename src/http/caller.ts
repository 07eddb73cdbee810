/**
 * Who is calling. The HTTP layer resolves it once per request from the request's bearer
 * token or else the connection's verified TLS client certificate; domain services only
 * ever see `Caller`. `owner` is the owner key of jobs, delegations and pool leases: the
 * end-entity subject in RFC 4514 form (unambiguous), or `<iss>#<sub>` for a token (an
 * https URL and `#`: never a subject's RFC 4514 form, which starts with an attribute
 * type and `=`). `dn` is what is shown and matched by configuration: the subject in
 * OpenSSL one-line form (`/C=../O=../CN=..`), or `<iss>#<sub>` for a token.
 */
import type { IncomingMessage } from 'node:http';
import type { ErrorCode } from '../errors/catalog.js';
import type { TokenIdentity } from '../auth/identity.js';

export interface Caller {
  readonly dn: string;
  /** The owner key (see above): compare ownership on this, never on `dn`. */
  readonly owner: string;
  readonly kind: 'x509' | 'token';
  /** Earliest notAfter of the presented chain (or token expiry), if known. */
  readonly notAfter?: Date;
  /** Verified VOMS FQANs of the caller's proxy (recorded with its jobs); absent without VOMS attributes. */
  readonly fqans?: readonly string[];
  /** The local account the caller is mapped to (src/authz); absent when no mapping is configured. */
  readonly localAccount?: string;
  /** Queues the caller may use (src/authz); absent: all. */
  readonly queues?: readonly string[];
  /** The caller's authorization groups (src/authz), named when a queue is not open to them; absent without authorization. */
  readonly groups?: readonly string[];
  /** VOs whose jobs the caller may list and follow but not act on (src/authz/monitors.ts); absent: none. */
  readonly monitors?: readonly string[];
  /** The verified bearer token of a `token` caller (its claims and the token itself). */
  readonly token?: TokenIdentity;
}

export type CallerResult =
  | { readonly ok: true; readonly caller: Caller }
  | {
      readonly ok: false;
      readonly code: ErrorCode;
      readonly reason: string;
      readonly headers?: Readonly<Record<string, string>>;
    };

/**
 * Resolves the caller of a request; must be cheap (called once per request). Async only
 * when a bearer token's issuer keys have to be fetched.
 */
export type Authenticator = (req: IncomingMessage) => CallerResult | Promise<CallerResult>;

/** What a request does, for token scopes (src/auth/token/scopes.ts). */
export type { Operation } from '../auth/token/scopes.js';
import type { Operation } from '../auth/token/scopes.js';

/**
 * Decides whether an authenticated caller may use the non-public resources, and adds
 * what the decision yields (local account, queues); throws a 403 CeError to refuse.
 * Not consulted for public resources (versions, info), which any caller may read.
 */
export type Authorizer = (req: IncomingMessage, caller: Caller, operation: Operation) => Caller;
