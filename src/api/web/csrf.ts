/**
 * Per-identity request tokens for the web interface's actions. A browser presents the
 * user's certificate to any page's request, so besides the Origin/Sec-Fetch-Site check
 * (src/http/cross-site.ts) every action carries a token only a page of this service could
 * have read: `<issued-at seconds>.<HMAC-SHA256(secret, dn + issued-at)>`. The secret is
 * made at start and never leaves the process (a restart invalidates open pages' tokens,
 * which then answer a clear "reload the page" error).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenCheck = 'ok' | 'missing' | 'expired' | 'invalid';

export class CsrfTokens {
  readonly #secret: Buffer;
  constructor(
    readonly maxAgeSeconds: number,
    secret: Buffer = randomBytes(32),
    readonly now: () => number = Date.now,
  ) {
    this.#secret = secret;
  }

  #mac(dn: string, t: string): string {
    return createHmac('sha256', this.#secret).update(`${t}\n${dn}`).digest('base64url');
  }

  issue(dn: string, at = Math.floor(this.now() / 1000)): string {
    const t = String(at);
    return `${t}.${this.#mac(dn, t)}`;
  }

  check(dn: string, token: string | undefined): TokenCheck {
    if (token === undefined || token === '') return 'missing';
    const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return 'invalid';
    const want = Buffer.from(this.#mac(dn, m[1] as string));
    const got = Buffer.from(m[2] as string);
    if (!timingSafeEqual(want, got)) return 'invalid';
    const age = Math.floor(this.now() / 1000) - Number(m[1]);
    if (age < -60 || age > this.maxAgeSeconds) return 'expired';
    return 'ok';
  }
}
