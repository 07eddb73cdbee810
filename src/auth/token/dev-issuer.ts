/**
 * The development token issuer: an ES256 key kept in the development PKI folder, so
 * that `ceres token issue` makes tokens the development service trusts out of the box.
 *
 *   token-issuer-key.pem    private key (PKCS#8), 0600
 *   token-issuer-jwks.json  its public key as a JWK set (the service's jwksFile)
 *
 * The issuer name is `https://ceres-dev.invalid/issuer/<key thumbprint>`: an https URL as
 * the profile requires, under a reserved name that resolves nowhere, and different for
 * every PKI, so that tokens of one development installation mean nothing to another.
 * Like the development CA, this is for trying things out only.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JWK } from 'jose';

export const DEV_ISSUER_FILES = { key: 'token-issuer-key.pem', jwks: 'token-issuer-jwks.json' } as const;
const ALG = 'ES256';
export const ANY_AUDIENCE = 'https://wlcg.cern.ch/jwt/v1/any';

export interface DevIssuer {
  readonly issuer: string;
  readonly jwksFile: string;
  readonly keyFile: string;
}

/** The development issuer of the PKI in `pkiDir`, its key made on first use. */
export async function ensureDevIssuer(pkiDir: string): Promise<DevIssuer> {
  const keyFile = join(pkiDir, DEV_ISSUER_FILES.key);
  const jwksFile = join(pkiDir, DEV_ISSUER_FILES.jwks);
  let pem = await readFile(keyFile, 'utf8').catch(() => undefined);
  if (pem === undefined) {
    // ES256: an EC key on P-256, kept as PKCS#8 PEM (what jose's exportPKCS8 writes).
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await writeAtomic(keyFile, pem, 0o600);
  }
  const pub = publicJwk(pem);
  // Always rewritten from the key: the two files can never disagree.
  await writeAtomic(jwksFile, `${JSON.stringify({ keys: [pub] }, null, 2)}\n`, 0o644);
  return { issuer: issuerOf(pub), jwksFile, keyFile };
}

export interface DevTokenRequest {
  readonly sub: string;
  readonly scope?: string | undefined;
  readonly aud?: string | undefined;
  readonly lifetimeSeconds?: number | undefined;
  readonly groups?: readonly string[] | undefined;
}

/** A WLCG profile access token signed by the development issuer of `pkiDir`. */
export async function issueDevToken(pkiDir: string, r: DevTokenRequest, now: number = Date.now()): Promise<string> {
  let pem = await readFile(join(pkiDir, DEV_ISSUER_FILES.key), 'utf8').catch(() => undefined);
  if (pem === undefined) {
    // A development PKI made before the issuer existed, or never started: make it now.
    if (!existsSync(join(pkiDir, 'ca.pem')))
      throw new Error(
        `${pkiDir} holds no development PKI (start the service once, or run \`ceres pki init --dir ${pkiDir}\`)`,
      );
    pem = await readFile((await ensureDevIssuer(pkiDir)).keyFile, 'utf8');
  }
  const pub = publicJwk(pem);
  // jose only here (`ceres token`): the service's start makes no token.
  const { importPKCS8, SignJWT } = await import('jose');
  const key = await importPKCS8(pem, ALG);
  const iat = Math.floor(now / 1000);
  const claims: Record<string, unknown> = { 'wlcg.ver': '1.0' };
  if (r.scope !== undefined && r.scope.trim() !== '') claims.scope = r.scope.trim().split(/\s+/).join(' ');
  if (r.groups !== undefined && r.groups.length > 0) claims['wlcg.groups'] = [...r.groups];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, typ: 'JWT', kid: pub.kid })
    .setIssuer(issuerOf(pub))
    .setSubject(r.sub)
    .setAudience(r.aud ?? ANY_AUDIENCE)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + (r.lifetimeSeconds ?? 3600))
    .setJti(randomUUID())
    .sign(key);
}

/**
 * The public JWK of the PKCS#8 key, its `kid` the first 16 characters of its RFC 7638
 * thumbprint (SHA-256 of the required members in lexical order), as jose's
 * calculateJwkThumbprint makes it. With node:crypto, so that the service's start does
 * not load jose (it is loaded when a token is verified).
 */
function publicJwk(pem: string): JWK {
  const jwk = createPrivateKey(pem).export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || jwk.x === undefined || jwk.y === undefined)
    throw new Error('the development token issuer key is not an EC P-256 key');
  const pub = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  const thumbprint = createHash('sha256')
    .update(JSON.stringify({ crv: pub.crv, kty: pub.kty, x: pub.x, y: pub.y }))
    .digest('base64url');
  return { ...pub, kid: thumbprint.slice(0, 16), alg: ALG, use: 'sig' };
}

function issuerOf(pub: JWK): string {
  return `https://ceres-dev.invalid/issuer/${pub.kid as string}`;
}

async function writeAtomic(file: string, text: string, mode: number): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode });
  await chmod(tmp, mode);
  await rename(tmp, file);
}
