/**
 * Who is calling. The HTTP layer resolves it once per request from the connection's
 * verified TLS client certificate (and later from a bearer token); domain services
 * only ever see `Caller`. `dn` is the owner key of jobs and delegations: the
 * end-entity subject DN in OpenSSL one-line form (`/C=../O=../CN=..`).
 */
import type { IncomingMessage } from 'node:http';
import type { ErrorCode } from '../errors/catalog.js';

export interface Caller {
  readonly dn: string;
  readonly kind: 'x509' | 'token';
  /** Earliest notAfter of the presented chain (or token expiry), if known. */
  readonly notAfter?: Date;
}

export type CallerResult =
  | { readonly ok: true; readonly caller: Caller }
  | { readonly ok: false; readonly code: ErrorCode; readonly reason: string };

/** Resolves the caller of a request; must be cheap (called once per request). */
export type Authenticator = (req: IncomingMessage) => CallerResult;
