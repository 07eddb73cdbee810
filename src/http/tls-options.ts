/**
 * TLS for the service listener and the client identity of each connection.
 *
 * - Node's TLS cannot accept RFC 3820 proxies (OpenSSL needs a flag Node does not
 *   expose), so the listener requests a certificate, lets every handshake complete
 *   (rejectUnauthorized false) and src/auth verifies the chain. Clients without a
 *   certificate (token users) connect too and are told apart by the request layer.
 * - On a resumed session Node reports only the leaf certificate, which makes a proxy
 *   chain unverifiable: session tickets and the session cache are off, so every
 *   connection does a full handshake and presents its full chain.
 * - Renegotiation is off: a client could otherwise present another certificate on
 *   a connection whose identity was already established.
 * - The chain is read and verified once per connection ('secureConnection') and the
 *   result kept on the socket: reading the peer certificate per request costs more
 *   than half the throughput on small requests. Requests then call `peerIdentity`.
 */
import { constants } from 'node:crypto';
import type { ServerOptions } from 'node:https';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { authenticateChain, trustGeneration, type AttributeVerifier } from '../auth/authenticate-chain.js';
import { VerifiedChainCache } from '../auth/chain-cache.js';
import type { AuthResult } from '../auth/identity.js';
import type { TrustStore } from '../pki/trust-store.js';
import { LegacyChainBudget, readPeerChain } from './peer-chain.js';

export interface TlsServerCredentials {
  /** Host certificate, optionally followed by its intermediate CAs (PEM). */
  readonly certPem: string;
  readonly keyPem: string;
  /** Trusted CAs (PEM); their names go into the CertificateRequest. */
  readonly caPems: readonly string[];
}

export function tlsServerOptions(c: TlsServerCredentials): ServerOptions {
  return {
    cert: c.certPem,
    key: c.keyPem,
    ca: [...c.caPems],
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    secureOptions: constants.SSL_OP_NO_TICKET | constants.SSL_OP_NO_RENEGOTIATION,
    sessionTimeout: 0,
  };
}

/** The subset of a pino logger used here. */
export interface AuthLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface AttachOptions {
  readonly log?: AuthLog;
  /** Shared cache of verified chains; one per trust store is made when absent. */
  readonly cache?: VerifiedChainCache;
  /** Clock in ms (tests). */
  readonly now?: () => number;
  /** Attributes of the chain (VOMS) to verify and add to the identity. */
  readonly attributes?: AttributeVerifier;
  /** What reading legacy (GT2) proxy chains may leak over the listener's life (./peer-chain.ts). */
  readonly legacyChainBudget?: LegacyChainBudget;
}

const PEER = Symbol('ceres.peerIdentity');
const RECHECK = Symbol('ceres.peerRecheck');
/**
 * How a kept-alive connection's identity is verified again when the CRLs (or the VOMS
 * directory) change, or the trusted CAs do (another store is in force): the store in
 * force and its cache, the attribute verifier, and the generation of the last verification.
 */
interface Recheck {
  readonly current: () => TrustStore;
  readonly cacheOf: (store: TrustStore) => VerifiedChainCache;
  readonly attributes: AttributeVerifier | undefined;
  generation: string;
}
type AuthSocket = TLSSocket & { [PEER]?: AuthResult; [RECHECK]?: Recheck };

const NOT_ATTACHED: AuthResult = {
  ok: false,
  code: 'CE_ERR_AUTH_NO_CREDENTIALS',
  reason: 'the connection was not authenticated',
};
const cachesByStore = new WeakMap<TrustStore, VerifiedChainCache>();

/**
 * Verify each connection's client chain once, when its handshake completes, and keep
 * the result on the socket. `trust` may be a function so that a reloaded CA directory
 * takes effect (each store has its own cache of verified chains): for new connections,
 * and for kept-alive ones from their next request (`peerIdentity`).
 */
export function attachPeerIdentity(
  server: TlsServer,
  trust: TrustStore | (() => TrustStore),
  opts: AttachOptions = {},
): void {
  const now = opts.now ?? Date.now;
  const current = typeof trust === 'function' ? trust : () => trust;
  const cacheOf = (store: TrustStore): VerifiedChainCache => opts.cache ?? cacheFor(store);
  const legacy = opts.legacyChainBudget ?? new LegacyChainBudget();
  let legacySpentLogged = false;
  // Prepended so the result exists before the HTTP layer sees any request on the socket.
  server.prependListener('secureConnection', (socket: TLSSocket) => {
    const s = socket as AuthSocket;
    let result: AuthResult;
    try {
      const store = current();
      const cache = cacheOf(store);
      const t = now();
      const chain = readPeerChain(socket, { anchors: anchorsOf(store), legacy });
      if (chain.legacyUnread === true) {
        if (!legacySpentLogged) {
          legacySpentLogged = true;
          opts.log?.error(
            { budgetMiB: LegacyChainBudget.DEFAULT_BYTES / 1048576 },
            'legacy (GT2) proxy chains are refused from now on: reading them leaks memory in Node, and the budget for it is spent (a restart renews it)',
          );
        }
        result = {
          ok: false,
          code: 'CE_ERR_AUTH_CERT_INVALID',
          reason:
            'legacy (GT2) proxies are not accepted by this service at present; use an RFC 3820 proxy (voms-proxy-init, arcproxy)',
        };
      } else result = authenticateChain(chain, store, cache, t, opts.attributes);
      if (result.ok)
        s[RECHECK] = {
          current,
          cacheOf,
          attributes: opts.attributes,
          generation: trustGeneration(store, opts.attributes, t),
        };
    } catch (e) {
      // Fail closed; the reason given to the client stays generic.
      opts.log?.error({ err: e }, 'client certificate verification failed unexpectedly');
      result = { ok: false, code: 'CE_ERR_AUTH_CERT_INVALID', reason: 'the client certificate could not be verified' };
    }
    s[PEER] = result;
    if (result.ok) {
      const v = result.identity.voms;
      opts.log?.debug(
        {
          dn: result.identity.dn,
          proxy: result.identity.isProxy,
          remote: socket.remoteAddress,
          ...(v === undefined ? {} : { vo: v.vo, fqans: v.fqans }),
        },
        'client authenticated',
      );
    } else if (result.code !== 'CE_ERR_AUTH_NO_CREDENTIALS') {
      opts.log?.info({ reason: result.reason, remote: socket.remoteAddress }, 'client certificate refused');
    }
  });
}

/**
 * The identity of the connection a request arrived on (cheap: a property read and a
 * clock comparison). Credentials that expire while a kept-alive connection is open
 * stop working at their notAfter, and a revocation published by a CRL reload applies to
 * them from their next request: when the CRL generation has moved since the connection
 * was verified, its chain (kept on the socket) is verified again, once per reload. So is
 * it when the trusted CAs changed (a new store is in force): a CA taken out of the
 * directory stops authenticating its users' open connections too, not only new ones.
 */
export function peerIdentity(socket: TLSSocket, now: number = Date.now()): AuthResult {
  const s = socket as AuthSocket;
  const rc = s[RECHECK];
  if (rc !== undefined) {
    const store = rc.current();
    if (trustGeneration(store, rc.attributes, now) !== rc.generation) {
      const again = authenticateChain(readPeerChain(socket), store, rc.cacheOf(store), now, rc.attributes);
      rc.generation = trustGeneration(store, rc.attributes, now);
      s[PEER] = again;
      if (!again.ok) s[RECHECK] = undefined;
    }
  }
  const r = s[PEER] ?? NOT_ATTACHED;
  if (r.ok && now >= r.identity.notAfter.getTime()) {
    return {
      ok: false,
      code: 'CE_ERR_AUTH_CERT_INVALID',
      reason: `the client credentials expired at ${r.identity.notAfter.toISOString()}`,
    };
  }
  if (r.ok && r.identity.voms !== undefined && now >= r.identity.voms.notAfter.getTime()) {
    // The attribute certificate expired on a kept-alive connection: the certificate still authenticates.
    const { voms: _expired, ...rest } = r.identity;
    s[PEER] = { ok: true, identity: rest };
    return s[PEER];
  }
  return r;
}

/**
 * The key per-identity limits count a connection under (http/fairness.ts): the verified
 * subject's owner key, so all proxies of one user share it; without a verified identity,
 * the remote address.
 */
export function connectionKey(socket: TLSSocket): string {
  const r = (socket as AuthSocket)[PEER];
  return r?.ok === true ? `dn:${r.identity.owner}` : `address:${socket.remoteAddress ?? 'unknown'}`;
}

const anchorsByStore = new WeakMap<TrustStore, ReadonlySet<string>>();

/** The trust anchors' fingerprints, which Node adds to a presented chain (./peer-chain.ts). */
function anchorsOf(store: TrustStore): ReadonlySet<string> {
  let a = anchorsByStore.get(store);
  if (a === undefined) {
    a = new Set(store.anchors.map((c) => c.fingerprint256));
    anchorsByStore.set(store, a);
  }
  return a;
}

function cacheFor(store: TrustStore): VerifiedChainCache {
  let c = cachesByStore.get(store);
  if (c === undefined) {
    c = new VerifiedChainCache();
    cachesByStore.set(store, c);
  }
  return c;
}
