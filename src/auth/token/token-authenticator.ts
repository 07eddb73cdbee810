/**
 * Bearer-token authentication of requests: the verified identity of a token, from a
 * small cache when the same token comes again (a client sends one token with every
 * request; verifying a signature each time would cost more than the request). A cached
 * identity is dropped at its `exp` (plus the skew allowance), so it never outlives the
 * token; a key the issuer withdraws stops new tokens at once and cached ones at their
 * expiry.
 */
import type { TokenIdentity } from '../identity.js';
import { verifyToken, type TokenResult, type VerifyContext } from './verify.js';

/** Most cached identities; beyond, the cache starts over (a bound, not an LRU). */
const MAX_CACHED = 10_000;

export class TokenAuthenticator {
  readonly #ctx: VerifyContext;
  readonly #now: () => number;
  readonly #cache = new Map<string, TokenIdentity>();

  constructor(ctx: VerifyContext) {
    this.#ctx = ctx;
    this.#now = ctx.now ?? Date.now;
  }

  async verify(token: string): Promise<TokenResult> {
    const hit = this.#cache.get(token);
    if (hit !== undefined) {
      if (this.#now() < hit.notAfter.getTime() + this.#ctx.clockSkewSeconds * 1000) return { ok: true, identity: hit };
      this.#cache.delete(token);
    }
    const r = await verifyToken(token, this.#ctx);
    if (r.ok) {
      if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
      this.#cache.set(token, r.identity);
    }
    return r;
  }
}
