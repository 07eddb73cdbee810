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
import { constants, type X509Certificate } from 'node:crypto';
import type { ServerOptions } from 'node:https';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import {
  authenticateChain,
  trustGeneration,
  type AttributeVerifier,
  type PresentedChain,
} from '../auth/authenticate-chain.js';
import { VerifiedChainCache } from '../auth/chain-cache.js';
import type { AuthResult } from '../auth/identity.js';
import { MAX_CHAIN_LENGTH } from '../auth/x509-chain.js';
import type { TrustStore } from '../pki/trust-store.js';

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
}

const PEER = Symbol('ceres.peerIdentity');
const RECHECK = Symbol('ceres.peerRecheck');
/**
 * How a kept-alive connection's identity is verified again when the CRLs (or the VOMS
 * directory) change: the trust store, attribute verifier and cache it was verified
 * with, and the generation of that verification.
 */
interface Recheck {
  readonly store: TrustStore;
  readonly cache: VerifiedChainCache;
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
 * takes effect for new connections (each store has its own cache of verified chains).
 */
export function attachPeerIdentity(
  server: TlsServer,
  trust: TrustStore | (() => TrustStore),
  opts: AttachOptions = {},
): void {
  const now = opts.now ?? Date.now;
  // Prepended so the result exists before the HTTP layer sees any request on the socket.
  server.prependListener('secureConnection', (socket: TLSSocket) => {
    const s = socket as AuthSocket;
    let result: AuthResult;
    try {
      const store = typeof trust === 'function' ? trust() : trust;
      const cache = opts.cache ?? cacheFor(store);
      const t = now();
      result = authenticateChain(readPeerChain(socket), store, cache, t, opts.attributes);
      if (result.ok)
        s[RECHECK] = {
          store,
          cache,
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
    } else if (result.code === 'CE_ERR_AUTH_CERT_INVALID') {
      opts.log?.info({ reason: result.reason, remote: socket.remoteAddress }, 'client certificate refused');
    }
  });
}

/**
 * The identity of the connection a request arrived on (cheap: a property read and a
 * clock comparison). Credentials that expire while a kept-alive connection is open
 * stop working at their notAfter, and a revocation published by a CRL reload applies to
 * them from their next request: when the CRL generation has moved since the connection
 * was verified, its chain (kept on the socket) is verified again, once per reload.
 */
export function peerIdentity(socket: TLSSocket, now: number = Date.now()): AuthResult {
  const s = socket as AuthSocket;
  const rc = s[RECHECK];
  if (rc !== undefined && trustGeneration(rc.store, rc.attributes, now) !== rc.generation) {
    const again = authenticateChain(readPeerChain(socket), rc.store, rc.cache, now, rc.attributes);
    rc.generation = trustGeneration(rc.store, rc.attributes, now);
    s[PEER] = again;
    if (!again.ok) s[RECHECK] = undefined;
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
 * DN, so all proxies of one user share it; without a verified identity, the remote address.
 */
export function connectionKey(socket: TLSSocket): string {
  const r = (socket as AuthSocket)[PEER];
  return r?.ok === true ? `dn:${r.identity.dn}` : `address:${socket.remoteAddress ?? 'unknown'}`;
}

const CHAIN = Symbol('ceres.peerChain');
type ChainSocket = TLSSocket & { [CHAIN]?: PresentedChain };

/**
 * The client's certificates in the order it sent them, leaf first (read once per
 * socket and kept on it).
 *
 * Not `getPeerCertificate(true)`: it rebuilds the chain by asking OpenSSL which
 * presented certificate issued which, and OpenSSL does not count a user certificate
 * without keyCertSign as the issuer of a legacy (GT2) proxy, which has no proxyCertInfo;
 * the user certificate was dropped and GT2 proxies refused. On Node 20 the walk of
 * `getPeerX509Certificate().issuerCertificate` gives the certificates exactly as sent,
 * but it consumes the chain OpenSSL keeps for the connection (a second call sees the
 * leaf only): hence the one read per socket. The TLS tests hold both facts, so a Node
 * upgrade that changes either is noticed.
 */
export function readPeerChain(socket: TLSSocket): PresentedChain {
  const s = socket as ChainSocket;
  if (s[CHAIN] !== undefined) return s[CHAIN];
  const ders: Buffer[] = [];
  const fingerprints: string[] = [];
  // One more than the verifier accepts, so an over-long chain is still refused as such.
  let c: X509Certificate | undefined = socket.getPeerX509Certificate();
  while (c !== undefined && ders.length <= MAX_CHAIN_LENGTH) {
    ders.push(c.raw);
    fingerprints.push(c.fingerprint256);
    c = c.issuerCertificate;
  }
  const chain = { ders, fingerprints };
  s[CHAIN] = chain;
  return chain;
}

function cacheFor(store: TrustStore): VerifiedChainCache {
  let c = cachesByStore.get(store);
  if (c === undefined) {
    c = new VerifiedChainCache();
    cachesByStore.set(store, c);
  }
  return c;
}
