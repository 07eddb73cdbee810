/**
 * From a presented certificate chain to an AuthResult, through the verified-chain
 * cache. Transport-neutral: the TLS listener (src/http/tls-options.ts) feeds it the
 * chain it read from the socket.
 */
import { chainKey, type VerifiedChainCache } from './chain-cache.js';
import type { AuthResult } from './identity.js';
import type { TrustStore } from '../pki/trust-store.js';
import { verifyClientChain } from './x509-chain.js';

export interface PresentedChain {
  /** DER certificates, leaf first. */
  readonly ders: readonly Uint8Array[];
  /** SHA-256 fingerprints of the same certificates, any stable spelling. */
  readonly fingerprints: readonly string[];
}

export function authenticateChain(chain: PresentedChain, trust: TrustStore, cache: VerifiedChainCache | undefined, now: number = Date.now()): AuthResult {
  if (chain.ders.length === 0) return { ok: false, code: 'CE_ERR_AUTH_NO_CREDENTIALS', reason: 'no client certificate was presented' };
  // CRLs may have been reloaded since a chain was cached: then every entry is dropped.
  cache?.follow(trust.refresh(now));
  const key = chainKey(chain.fingerprints);
  const hit = cache?.get(key, now);
  if (hit !== undefined) return { ok: true, identity: hit };
  const r = verifyClientChain(chain.ders, trust, new Date(now));
  if (!r.ok) return { ok: false, code: 'CE_ERR_AUTH_CERT_INVALID', reason: r.reason };
  cache?.set(key, r.identity);
  return { ok: true, identity: r.identity };
}
