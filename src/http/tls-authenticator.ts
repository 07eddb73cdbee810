/**
 * The caller of a request on a TLS connection: the identity verified once for the
 * connection (tls-options.ts) with its verified VOMS FQANs, or the reason it has none
 * (401 by the request layer).
 * Bearer tokens are the other way in (src/service/authorization.ts tries a token first).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { CallerResult } from './caller.js';
import { peerIdentity } from './tls-options.js';

export const tlsAuthenticator = (req: IncomingMessage): CallerResult => {
  const r = peerIdentity(req.socket as TLSSocket);
  if (!r.ok) return r;
  const fqans = r.identity.voms?.fqans;
  return {
    ok: true,
    caller: {
      dn: r.identity.dn,
      owner: r.identity.owner,
      kind: 'x509',
      notAfter: r.identity.notAfter,
      ...(fqans !== undefined && fqans.length > 0 ? { fqans } : {}),
    },
  };
};
