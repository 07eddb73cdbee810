/**
 * Token issuers for tests: real key pairs (RS256, ES256), real signed tokens (jose), and
 * a real https server (the development PKI's host certificate) publishing a discovery
 * document and a JWK set whose keys a test can rotate, counting every fetch.
 */
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface TestKey {
  readonly alg: 'RS256' | 'ES256';
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

export async function newKey(alg: 'RS256' | 'ES256' = 'ES256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const pub = await exportJWK(publicKey);
  const kid = (await calculateJwkThumbprint(pub)).slice(0, 12);
  return { alg, kid, privateKey, jwk: { ...pub, kid, alg, use: 'sig' } };
}

export interface TokenOptions {
  readonly iss: string;
  readonly sub?: string;
  readonly aud?: string | string[];
  /** Seconds relative to now. */
  readonly exp?: number;
  readonly nbf?: number;
  readonly iat?: number;
  readonly scope?: string;
  readonly groups?: string[];
  readonly ver?: string | null;
  readonly kid?: string;
  readonly extra?: Record<string, unknown>;
}

export const ANY = 'https://wlcg.cern.ch/jwt/v1/any';

export async function sign(key: TestKey, o: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { ...(o.extra ?? {}) };
  if (o.ver !== null) claims['wlcg.ver'] = o.ver ?? '1.0';
  if (o.scope !== undefined) claims.scope = o.scope;
  if (o.groups !== undefined) claims['wlcg.groups'] = o.groups;
  let j = new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: o.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(o.iss)
    .setAudience(o.aud ?? ANY)
    .setIssuedAt(now + (o.iat ?? 0))
    .setExpirationTime(now + (o.exp ?? 600));
  if (o.sub !== '') j = j.setSubject(o.sub ?? 'alice');
  if (o.nbf !== undefined) j = j.setNotBefore(now + o.nbf);
  return j.sign(key.privateKey);
}

/** An unsigned token (`alg: none`) with the given claims. */
export function unsigned(claims: Record<string, unknown>): string {
  const b = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'none', typ: 'JWT' })}.${b(claims)}.`;
}

/** An HS256 token whose secret is `secret` (e.g. an issuer's public key: the confusion attack). */
export async function hmac(secret: Uint8Array, o: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ 'wlcg.ver': '1.0', scope: o.scope ?? 'compute.read' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(o.iss)
    .setSubject(o.sub ?? 'alice')
    .setAudience(o.aud ?? ANY)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(secret);
}

export interface JwksServer {
  readonly issuer: string;
  /** Keys published now (replace to rotate). */
  keys: TestKey[];
  /** Requests so far, by path. */
  readonly hits: { discovery: number; jwks: number };
  close(): Promise<void>;
}

/** An issuer at https://127.0.0.1:<port> with the host certificate of the dev PKI in `pkiDir`. */
export async function startJwksServer(pkiDir: string, keys: TestKey[]): Promise<JwksServer> {
  const hits = { discovery: 0, jwks: 0 };
  const state = { keys };
  let issuer = '';
  const server: Server = createServer(
    { cert: readFileSync(join(pkiDir, 'hostcert.pem')), key: readFileSync(join(pkiDir, 'hostkey.pem')) },
    (req, res) => {
      if (req.url === '/.well-known/openid-configuration') {
        hits.discovery++;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      } else if (req.url === '/jwks') {
        hits.jwks++;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: state.keys.map((k) => k.jwk) }));
      } else {
        res.statusCode = 404;
        res.end();
      }
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    get keys() {
      return state.keys;
    },
    set keys(k: TestKey[]) {
      state.keys = k;
    },
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
