/**
 * Verified chains, so that the many connections of one client (pilots, aCT, the ARC
 * client's parallel transfers) do not each redo the signature checks. Keyed by the
 * SHA-256 fingerprints of the whole presented chain, so a different proxy or issuer
 * is a different entry. Bounded (least recently used first out); an entry is only
 * returned while `now` is before the chain's earliest notAfter. Only successes are
 * cached: a refused chain may become valid (not-yet-valid) and costs a full
 * handshake to present anyway. Entries are dropped when the CRLs change (`follow`).
 * An identity with VOMS attributes is returned only until the attribute certificate's
 * notAfter (usually before the chain's): then the chain is verified again, and its
 * identity comes back without them.
 */
import type { X509Identity } from './identity.js';

export class VerifiedChainCache {
  private readonly entries = new Map<string, X509Identity>();
  private generation: number | string | undefined;

  constructor(readonly maxEntries = 1024) {}

  /**
   * Keep entries only while the trust store's revocation data is the one they were
   * verified with: a new generation (CRLs reloaded) empties the cache.
   */
  follow(generation: number | string): void {
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
    }
  }

  get(key: string, now: number = Date.now()): X509Identity | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    this.entries.delete(key);
    if (now >= hit.notAfter.getTime()) return undefined;
    if (hit.voms !== undefined && now >= hit.voms.notAfter.getTime()) return undefined;
    this.entries.set(key, hit); // most recently used goes last
    return hit;
  }

  set(key: string, identity: X509Identity): void {
    this.entries.delete(key);
    this.entries.set(key, identity);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Cache key of a chain from its certificates' fingerprints, leaf first. */
export function chainKey(fingerprints: readonly string[]): string {
  return fingerprints.join('/');
}
