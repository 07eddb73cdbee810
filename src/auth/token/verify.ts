/**
 * Verification of a bearer token (WLCG Common JWT Profile, access tokens):
 *
 *   compact JWS only, bounded size; `alg` asymmetric only (RS*, PS*, ES*): `none` and
 *   HMAC are refused before any key is looked at (an HMAC "signature" made with a
 *   public key as the secret is the classic confusion attack); `iss` one of the trusted
 *   issuers; signature with that issuer's key for the header's `kid`; `aud` one of the
 *   accepted audiences; `exp` required and `nbf` and `iat` not in the future, each with
 *   the clock-skew allowance; `sub` present, printable and at most 256 characters;
 *   `wlcg.groups` without control characters;
 *   `wlcg.ver`, when present, of major 1 (a newer minor is accepted, an unknown major
 *   refused; tokens of SciTokens issuers carry none). Unknown claims are ignored.
 *
 * A refusal carries a reason naming the failed check, never the token or a claim value
 * the client did not choose.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { TokenIdentity } from '../identity.js';
import type { IssuerKeys } from './issuer-keys.js';

/** Signature algorithms accepted (WLCG requires RS256 and ES256). */
export const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'] as const;
/** Longest token accepted (real WLCG tokens are 1-3 KB). */
export const MAX_TOKEN_BYTES = 16 * 1024;
/** Longest subject accepted (issuers use UUIDs or short names). */
const MAX_SUBJECT_CHARS = 256;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface VerifyContext {
  readonly issuers: ReadonlyMap<string, IssuerKeys>;
  readonly audiences: () => readonly string[];
  readonly clockSkewSeconds: number;
  readonly now?: () => number;
}

export type TokenResult =
  { readonly ok: true; readonly identity: TokenIdentity } | { readonly ok: false; readonly reason: string };

const refuse = (reason: string): TokenResult => ({ ok: false, reason });

export async function verifyToken(token: string, ctx: VerifyContext): Promise<TokenResult> {
  if (token.length > MAX_TOKEN_BYTES) return refuse(`the token is longer than ${MAX_TOKEN_BYTES} bytes`);
  if (!COMPACT_JWS.test(token))
    return refuse('the token is not a JWT (expected three base64url parts separated by dots)');
  let alg: unknown;
  let iss: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
    iss = decodeJwt(token).iss;
  } catch {
    return refuse('the token is not a JWT (its header or payload is not a JSON object)');
  }
  if (alg === 'none' || typeof alg !== 'string') return refuse('unsigned tokens (alg none) are not accepted');
  if (alg.startsWith('HS')) return refuse(`symmetric signatures (${alg}) are not accepted`);
  if (!(ALGORITHMS as readonly string[]).includes(alg))
    return refuse(`signature algorithm ${alg.slice(0, 16)} is not accepted`);
  if (typeof iss !== 'string') return refuse('the token has no issuer (iss)');
  const keys = ctx.issuers.get(iss);
  if (keys === undefined) return refuse('the token issuer is not trusted');
  const nowMs = (ctx.now ?? Date.now)();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, (h, t) => keys.keyFor(h, t), {
      issuer: iss,
      audience: [...ctx.audiences()],
      algorithms: [...ALGORITHMS],
      clockTolerance: ctx.clockSkewSeconds,
      requiredClaims: ['exp', 'sub'],
      currentDate: new Date(nowMs),
    }));
  } catch (e) {
    return refuse(reasonOf(e));
  }
  if (typeof payload.iat === 'number' && payload.iat > nowMs / 1000 + ctx.clockSkewSeconds)
    return refuse('the token was issued in the future (iat)');
  const ver = payload['wlcg.ver'];
  if (ver !== undefined && !(typeof ver === 'string' && /^1(\.\d+)?$/.test(ver)))
    return refuse('unsupported WLCG token profile version (wlcg.ver): major version 1 is accepted');
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub === '') return refuse('the token has no subject (sub)');
  // The subject becomes part of the owner key, which goes into log lines and the job's
  // control files (one key=value per line): no control characters, bounded length.
  if (sub.length > MAX_SUBJECT_CHARS || /[\p{Cc}\u2028\u2029]/u.test(sub))
    return refuse('the token subject (sub) is too long or holds control characters');
  const scope = payload.scope;
  const groups = payload['wlcg.groups'];
  // Groups become the job's FQANs: its VO, the accounting records' VO fields (one per
  // line), listings and filters. A line break in one would write fields of its own.
  if (Array.isArray(groups) && groups.some((g) => typeof g === 'string' && /[\p{Cc}\u2028\u2029]/u.test(g)))
    return refuse('a group of the token (wlcg.groups) holds control characters');
  const identity: TokenIdentity = {
    kind: 'token',
    owner: `${iss}#${sub}`,
    issuer: iss,
    subject: sub,
    scopes: typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : [],
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
    notAfter: new Date((payload.exp as number) * 1000),
    token,
  };
  return { ok: true, identity };
}

/** The failed check, in words (jose's messages are close but name internals). */
function reasonOf(e: unknown): string {
  if (e instanceof errors.JWTExpired) return 'the token has expired (exp)';
  if (e instanceof errors.JWTClaimValidationFailed) {
    switch (e.claim) {
      case 'aud':
        return 'the token audience (aud) does not include this service';
      case 'nbf':
        return 'the token is not yet valid (nbf)';
      case 'iat':
        return 'the token issue time (iat) is invalid';
      case 'iss':
        return 'the token issuer is not trusted';
      default:
        return `the token claim ${e.claim.slice(0, 32)} is missing or invalid`;
    }
  }
  if (e instanceof errors.JWKSNoMatchingKey) return "no key of the token issuer matches the token's key id (kid)";
  if (e instanceof errors.JWKSMultipleMatchingKeys)
    return 'the token names no key id (kid) and its issuer has several keys';
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (e instanceof errors.JOSEAlgNotAllowed) return 'the token signature algorithm is not accepted';
  if (e instanceof errors.JWTInvalid || e instanceof errors.JWSInvalid) return 'the token is malformed';
  return 'the token could not be verified';
}
