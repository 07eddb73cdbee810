/**
 * From a presented certificate chain to an AuthResult, through the verified-chain
 * cache. Transport-neutral: the TLS listener (src/http/tls-options.ts) feeds it the
 * chain it read from the socket.
 */
import { chainKey, type VerifiedChainCache } from './chain-cache.js';
import type { AuthResult, X509Identity } from './identity.js';
import type { TrustStore } from '../pki/trust-store.js';
import { verifyClientChain } from './x509-chain.js';

export interface PresentedChain {
  /** DER certificates, leaf first. */
  readonly ders: readonly Uint8Array[];
  /** SHA-256 fingerprints of the same certificates, any stable spelling. */
  readonly fingerprints: readonly string[];
}

/**
 * Attributes carried by a verified chain (VOMS, src/auth/voms): adds what verifies to
 * the identity, never throws, never refuses the chain itself.
 */
export interface AttributeVerifier {
  /** Brings its trust data up to date; the result changes whenever that data did. */
  refresh(now: number): number;
  /** `cacheable` false: the outcome may change by itself soon (an AC not yet valid). */
  addAttributes(
    ders: readonly Uint8Array[],
    identity: X509Identity,
    trust: TrustStore,
    now: number,
  ): { identity: X509Identity; cacheable: boolean };
}

const storeIds = new WeakMap<TrustStore, number>();
let lastStoreId = 0;

/**
 * What cached results depend on: the trust store itself (a changed CA directory is
 * another store, src/pki/live-trust-store.ts), its CRLs and, with attributes, the
 * attribute trust.
 */
export function trustGeneration(trust: TrustStore, attributes: AttributeVerifier | undefined, now: number): string {
  let id = storeIds.get(trust);
  if (id === undefined) storeIds.set(trust, (id = ++lastStoreId));
  const crls = `${id}:${trust.refresh(now)}`;
  return attributes === undefined ? crls : `${crls}/${attributes.refresh(now)}`;
}

export function authenticateChain(
  chain: PresentedChain,
  trust: TrustStore,
  cache: VerifiedChainCache | undefined,
  now: number = Date.now(),
  attributes?: AttributeVerifier,
): AuthResult {
  if (chain.ders.length === 0)
    return { ok: false, code: 'CE_ERR_AUTH_NO_CREDENTIALS', reason: 'no client certificate was presented' };
  // CRLs (or the VOMS directory) may have changed since a chain was cached: then every entry is dropped.
  const generation = trustGeneration(trust, attributes, now); // not inside `cache?.`: it also brings the trust data up to date
  cache?.follow(generation);
  const key = chainKey(chain.fingerprints);
  const hit = cache?.get(key, now);
  if (hit !== undefined) return { ok: true, identity: hit };
  const r = verifyClientChain(chain.ders, trust, new Date(now));
  if (!r.ok)
    return {
      ok: false,
      code: r.kind === 'ambiguous-subject' ? 'CE_ERR_AUTH_SUBJECT_AMBIGUOUS' : 'CE_ERR_AUTH_CERT_INVALID',
      reason: r.reason,
    };
  const { identity, cacheable } =
    attributes === undefined
      ? { identity: r.identity, cacheable: true }
      : attributes.addAttributes(chain.ders, r.identity, trust, now);
  if (cacheable) cache?.set(key, identity);
  return { ok: true, identity };
}
