/**
 * Which credential the caller has, found where grid tools look for it, and what it
 * says (never the secret itself):
 *
 *  - a bearer token by WLCG Bearer Token Discovery: `BEARER_TOKEN` (the token),
 *    `BEARER_TOKEN_FILE` (a file holding it), `$XDG_RUNTIME_DIR/bt_u<uid>`,
 *    `/tmp/bt_u<uid>`; the first that is set and not empty wins;
 *  - an X.509 proxy: `X509_USER_PROXY`, else `/tmp/x509up_u<uid>` (voms-proxy-init's and
 *    arcproxy's default).
 *
 * A token file given on the command line, or a token named by the environment
 * (`BEARER_TOKEN`, `BEARER_TOKEN_FILE`), is what the caller chose: it wins over a proxy.
 * Otherwise a proxy wins over a token file left at a default place.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OID_VOMS_AC_SEQ, decodeVomsExtension } from '../auth/voms/attribute-certificate.js';
import { parseCertificate, pemBlocks, type ParsedCertificate } from '../pki/certificate.js';

export interface ProxyCredential {
  readonly kind: 'proxy';
  /** Where it was found (a path; the variable that named it). */
  readonly source: string;
  readonly path: string;
  readonly pem: string;
  /** Subject of the end-entity certificate: the identity the service sees. */
  readonly identity: string;
  /** Subject of the proxy itself (the first certificate). */
  readonly subject: string;
  /** The earliest notAfter of the chain in the file: the proxy is usable until then. */
  readonly notAfter: Date;
  readonly notBefore: Date;
  /** FQANs of the VOMS attribute certificates, in order (empty: a plain proxy). */
  readonly fqans: readonly string[];
  readonly vomsNotAfter: Date | undefined;
}

export interface TokenCredential {
  readonly kind: 'token';
  readonly source: string;
  readonly token: string;
  /** The claims as they read, not verified (the service verifies them). */
  readonly claims: TokenClaims;
}

export interface TokenClaims {
  readonly iss?: string;
  readonly sub?: string;
  readonly scope?: string;
  readonly exp?: number;
  readonly aud?: string | readonly string[];
  readonly groups?: readonly string[];
}

export type Credential = ProxyCredential | TokenCredential;

/** Something the caller can fix: the reason, and how. */
export class CredentialProblem extends Error {
  constructor(
    message: string,
    readonly remedy: string,
  ) {
    super(message);
    this.name = 'CredentialProblem';
  }
}

const PROXY_REMEDY = 'make a proxy: voms-proxy-init --voms VO (or arcproxy), or name one with X509_USER_PROXY';
const TOKEN_REMEDY = 'get a new token (oidc-token, htgettoken) into BEARER_TOKEN_FILE or pass --token-file';

export interface FindOptions {
  readonly tokenFile?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly uid: number;
  readonly now?: Date;
}

export function findCredential(o: FindOptions): Credential {
  const env = o.env;
  const now = o.now ?? new Date();
  if (o.tokenFile !== undefined) return readToken(o.tokenFile, `--token-file ${o.tokenFile}`, now);
  if (nonEmpty(env.BEARER_TOKEN)) return tokenOf(env.BEARER_TOKEN.trim(), 'BEARER_TOKEN', now);
  if (nonEmpty(env.BEARER_TOKEN_FILE))
    return readToken(env.BEARER_TOKEN_FILE, `BEARER_TOKEN_FILE ${env.BEARER_TOKEN_FILE}`, now);
  if (nonEmpty(env.X509_USER_PROXY)) return readProxy(env.X509_USER_PROXY, 'X509_USER_PROXY', now);
  const defaultProxy = `/tmp/x509up_u${o.uid}`;
  if (exists(defaultProxy)) return readProxy(defaultProxy, 'the default proxy path', now);
  const tokenFiles = [
    ...(nonEmpty(env.XDG_RUNTIME_DIR) ? [join(env.XDG_RUNTIME_DIR, `bt_u${o.uid}`)] : []),
    `/tmp/bt_u${o.uid}`,
  ];
  for (const f of tokenFiles) if (exists(f)) return readToken(f, f, now);
  throw new CredentialProblem(
    `no credential found: no proxy (X509_USER_PROXY, ${defaultProxy}) and no bearer token (BEARER_TOKEN, BEARER_TOKEN_FILE, ${tokenFiles.join(', ')})`,
    `${PROXY_REMEDY}; or ${TOKEN_REMEDY}`,
  );
}

function nonEmpty(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== '';
}

function exists(path: string): boolean {
  return existsSync(path);
}

function readFile(path: string, what: string, remedy: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'error';
    throw new CredentialProblem(`cannot read the ${what} ${path} (${code})`, remedy);
  }
}

export function readProxy(path: string, source: string, now: Date): ProxyCredential {
  const pem = readFile(path, 'proxy', PROXY_REMEDY);
  let certs: ParsedCertificate[];
  try {
    certs = pemBlocks(pem).map((d) => parseCertificate(d));
  } catch (e) {
    throw new CredentialProblem(
      `the proxy ${path} holds a certificate that cannot be read (${String(e)})`,
      PROXY_REMEDY,
    );
  }
  const first = certs[0];
  if (first === undefined) throw new CredentialProblem(`the proxy ${path} holds no certificate`, PROXY_REMEDY);
  if (!/-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(pem))
    throw new CredentialProblem(`the proxy ${path} holds no private key`, PROXY_REMEDY);
  const endEntity = certs.find((c) => c.proxyCertInfo === undefined && !isLegacyProxy(c)) ?? certs[certs.length - 1];
  const notAfter = new Date(Math.min(...certs.map((c) => c.notAfter.getTime())));
  const notBefore = new Date(Math.max(...certs.map((c) => c.notBefore.getTime())));
  const acs = vomsOf(first);
  const p: ProxyCredential = {
    kind: 'proxy',
    source,
    path,
    pem,
    identity: (endEntity ?? first).subjectOneline,
    subject: first.subjectOneline,
    notAfter,
    notBefore,
    fqans: acs.flatMap((a) => a.fqans ?? []),
    vomsNotAfter: acs[0]?.notAfter,
  };
  if (notAfter.getTime() <= now.getTime())
    throw new CredentialProblem(
      `the proxy ${path} of ${p.identity} expired at ${iso(notAfter)}`,
      'make a new proxy: voms-proxy-init --voms VO (or arcproxy)',
    );
  if (notBefore.getTime() > now.getTime() + 5 * 60_000)
    throw new CredentialProblem(
      `the proxy ${path} is valid only from ${iso(notBefore)}`,
      'check the clock of this machine (and of the one that made the proxy)',
    );
  return p;
}

/** A GT2 "legacy" proxy has no proxyCertInfo but a subject ending in CN=proxy or CN=limited proxy. */
function isLegacyProxy(c: ParsedCertificate): boolean {
  return /\/CN=(limited )?proxy$/.test(c.subjectOneline);
}

function vomsOf(c: ParsedCertificate): ReturnType<typeof decodeVomsExtension> {
  const ext = c.extensions.get(OID_VOMS_AC_SEQ);
  if (ext === undefined) return [];
  try {
    return decodeVomsExtension(ext.value);
  } catch {
    return [];
  }
}

function readToken(path: string, source: string, now: Date): TokenCredential {
  return tokenOf(readFile(path, 'token file', TOKEN_REMEDY).trim(), source, now);
}

/** The token's claims, read without verifying it: the service does that; this only explains. */
export function tokenOf(token: string, source: string, now: Date): TokenCredential {
  const parts = token.split('.');
  let claims: TokenClaims | undefined;
  if (parts.length === 3) {
    try {
      const c = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
      claims = {
        ...(typeof c.iss === 'string' ? { iss: c.iss } : {}),
        ...(typeof c.sub === 'string' ? { sub: c.sub } : {}),
        ...(typeof c.scope === 'string' ? { scope: c.scope } : {}),
        ...(typeof c.exp === 'number' ? { exp: c.exp } : {}),
        ...(typeof c.aud === 'string' || Array.isArray(c.aud) ? { aud: c.aud as string | string[] } : {}),
        ...(Array.isArray(c['wlcg.groups']) ? { groups: (c['wlcg.groups'] as unknown[]).map(String) } : {}),
      };
    } catch {
      claims = undefined;
    }
  }
  // Said without the token's text: it is a secret, and so is any part of it.
  if (claims === undefined)
    throw new CredentialProblem(`the bearer token from ${source} is not a JWT (three base64url parts)`, TOKEN_REMEDY);
  if (claims.exp !== undefined && claims.exp * 1000 <= now.getTime())
    throw new CredentialProblem(
      `the bearer token from ${source} (issuer ${claims.iss ?? '?'}) expired at ${iso(new Date(claims.exp * 1000))}`,
      TOKEN_REMEDY,
    );
  return { kind: 'token', source, token, claims };
}

export function iso(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** "11 h 58 min" */
export function timeLeft(until: Date, now: Date): string {
  const min = Math.max(0, Math.floor((until.getTime() - now.getTime()) / 60_000));
  return min >= 60 ? `${Math.floor(min / 60)} h ${min % 60} min` : `${min} min`;
}
