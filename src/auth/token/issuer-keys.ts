/**
 * The signing keys of one trusted issuer: a JWK set from a file or from the issuer's
 * discovery document (`<iss>/.well-known/openid-configuration` → `jwks_uri`), kept in
 * memory and looked up by the token header's `kid`.
 *
 * Keys rotate, so a token naming a key we do not hold makes us load the set again, but
 * never more than once per `refreshMs` per issuer whatever the traffic: a flood of
 * tokens with made-up key ids costs one fetch per interval, and concurrent requests
 * share the fetch in progress. A set older than `maxAgeMs` is loaded again on next use;
 * a failed load keeps the keys we had.
 */
import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose';

type KeyResolver = ReturnType<typeof createLocalJWKSet>;
export type ResolvedKey = Awaited<ReturnType<KeyResolver>>;

export interface IssuerKeySource {
  readonly issuer: string;
  readonly jwksFile?: string | undefined;
}

export interface IssuerKeysOptions {
  readonly refreshMs: number;
  readonly maxAgeMs: number;
  /** Fetches a JSON document over https with the trusted CAs (the root passes src/http/https-get-json.ts). */
  readonly getJson: (url: string) => Promise<unknown>;
  readonly now?: () => number;
  /** Told about each load (for the log): what was loaded from where, or why it failed. */
  readonly onLoad?: (e: { issuer: string; from: string; keys?: number; error?: string }) => void;
}

export class IssuerKeys {
  readonly #src: IssuerKeySource;
  readonly #o: IssuerKeysOptions;
  readonly #now: () => number;
  #set: KeyResolver | undefined;
  #loadedAt = 0;
  /** Time of the last load attempt (success or failure): the rate limit. */
  #attemptAt = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<void> | undefined;
  /** Loads so far (tests and the log). */
  loads = 0;

  constructor(src: IssuerKeySource, o: IssuerKeysOptions) {
    this.#src = src;
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /** The key for a token's header; throws jose's JWKSNoMatchingKey (or a load error) when there is none. */
  async keyFor(header: JWTHeaderParameters, token: FlattenedJWSInput): Promise<ResolvedKey> {
    if (this.#set === undefined || this.#now() - this.#loadedAt >= this.#o.maxAgeMs) await this.#load();
    if (this.#set === undefined)
      throw new errors.JWKSNoMatchingKey(`the keys of issuer ${this.#src.issuer} could not be loaded`);
    try {
      return await this.#set(header, token);
    } catch (e) {
      if (!(e instanceof errors.JWKSNoMatchingKey)) throw e;
      // An unknown key id: the issuer may have rotated its keys.
      if (!(await this.#load())) throw e;
      return this.#set(header, token);
    }
  }

  /** Loads the set unless the last attempt is too recent; resolves whether a load happened. */
  async #load(): Promise<boolean> {
    if (this.#inFlight !== undefined) {
      await this.#inFlight;
      return true;
    }
    if (this.#now() - this.#attemptAt < this.#o.refreshMs) return false;
    this.#attemptAt = this.#now();
    this.#inFlight = this.#fetch().finally(() => (this.#inFlight = undefined));
    await this.#inFlight;
    return true;
  }

  async #fetch(): Promise<void> {
    const from = this.#src.jwksFile ?? `${this.#src.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    this.loads++;
    try {
      const jwks =
        this.#src.jwksFile !== undefined
          ? parseJwks(await readFile(this.#src.jwksFile, 'utf8'))
          : await this.#discover(from);
      if (!isJwks(jwks)) throw new Error(NOT_A_JWKS);
      this.#set = createLocalJWKSet(jwks);
      this.#loadedAt = this.#now();
      this.#o.onLoad?.({ issuer: this.#src.issuer, from, keys: jwks.keys.length });
    } catch (e) {
      this.#o.onLoad?.({ issuer: this.#src.issuer, from, error: e instanceof Error ? e.message : String(e) });
    }
  }

  async #discover(url: string): Promise<unknown> {
    const doc = await this.#o.getJson(url);
    const uri = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>).jwks_uri : undefined;
    if (typeof uri !== 'string' || !uri.startsWith('https://'))
      throw new Error('the discovery document names no https jwks_uri');
    return this.#o.getJson(uri);
  }
}

const NOT_A_JWKS = 'not a JWK set (no "keys" array)';

function isJwks(v: unknown): v is JSONWebKeySet {
  return typeof v === 'object' && v !== null && Array.isArray((v as { keys?: unknown }).keys);
}

/** The JSON of a jwksFile; throws with the parser's reason. */
function parseJwks(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new Error(`not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/**
 * Why the text of a jwksFile gives no usable key (what loading it at the first token would
 * find), or undefined when it holds a JWK set with at least one key of a known type. The
 * start and `ceres admin config check` ask this (src/service/config-checks.ts).
 */
export function jwksFileProblem(text: string): string | undefined {
  let jwks: unknown;
  try {
    jwks = parseJwks(text);
  } catch (e) {
    return (e as Error).message;
  }
  if (!isJwks(jwks)) return NOT_A_JWKS;
  if (jwks.keys.length === 0) return 'the JWK set holds no keys: no token of the issuer could be verified';
  const bad = jwks.keys.findIndex((k) => typeof k !== 'object' || k === null || typeof k.kty !== 'string');
  return bad < 0 ? undefined : `key ${bad} of the set has no "kty"`;
}
