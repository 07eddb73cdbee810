/**
 * The caller of a request on a TLS connection: the identity verified once for the
 * connection (tls-options.ts) with its verified VOMS FQANs, or the reason it has none
 * (401 by the request layer).
 * A second way in (bearer tokens) is another `Authenticator` beside this one.
 */
import type { TLSSocket } from 'node:tls';
import type { Authenticator } from './caller.js';
import { peerIdentity } from './tls-options.js';

export const tlsAuthenticator: Authenticator = (req) => {
  const r = peerIdentity(req.socket as TLSSocket);
  if (!r.ok) return r;
  const fqans = r.identity.voms?.fqans;
  return { ok: true, caller: { dn: r.identity.dn, kind: 'x509', notAfter: r.identity.notAfter, ...(fqans !== undefined && fqans.length > 0 ? { fqans } : {}) } };
};
