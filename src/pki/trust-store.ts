/**
 * The set of trusted CA certificates, loaded from a grid CA directory
 * (`<hash>.0`, `<hash>.1`, ... as in /etc/grid-security/certificates) and/or `*.pem`
 * files. Every certificate found there is a trust anchor, intermediates included
 * (IGTF distributes intermediate CAs in the same directory). The CRLs there
 * (`<hash>.r0`, ...) are checked and followed while the service runs
 * (src/pki/revocation.ts). Signing policies, namespaces and other companions are
 * ignored. Files that cannot be used are reported in `problems` and skipped; a
 * directory that cannot be read, or that holds no usable CA, is an error.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalEncoding, type Rdn } from './dn.js';
import { parseCertificate, pemBlocks, toPem, type ParsedCertificate } from './certificate.js';
import { PkiError } from './pki-error.js';
import { CrlDirectory, type CrlLog, type RevocationStatus } from './revocation.js';

export interface TrustStoreProblem {
  /** File name inside the CA directory. */
  readonly file: string;
  readonly reason: string;
}

export interface TrustStore {
  readonly anchors: readonly ParsedCertificate[];
  /** Files that were skipped, and why. */
  readonly problems: readonly TrustStoreProblem[];
  /** Trusted CAs whose subject equals `issuer` (OpenSSL name comparison). */
  candidates(issuer: readonly Rdn[]): readonly ParsedCertificate[];
  /** Whether exactly this certificate (by SHA-256 fingerprint) is trusted. */
  isAnchor(cert: ParsedCertificate): boolean;
  /** The anchors as PEM, for the TLS `ca` option (names in the CertificateRequest). */
  readonly pems: readonly string[];
  /** Revocation of `cert` (issued by `issuer`) by the CRLs in force, if any. */
  revocation(cert: ParsedCertificate, issuer: ParsedCertificate, now: number): RevocationStatus | undefined;
  /**
   * Bring the CRLs up to date (cheap when looked at recently); the result changes
   * whenever they did, and results of earlier verifications must then be dropped.
   */
  refresh(now: number): number;
}

const HASHED = /^[0-9a-f]{8}\.\d+$/;
const PEM = /\.pem$/i;

export interface LoadTrustStoreOptions {
  /** Accept a directory without any usable CA (the caller authenticates otherwise). */
  readonly allowEmpty?: boolean;
  /** Look at the CRLs again at most this often (ms); default DEFAULT_CRL_RECHECK_MS. */
  readonly crlRecheckMs?: number;
  /** Where CRL loads and problems are reported while the service runs. */
  readonly log?: CrlLog;
}

/** Load a CA directory (synchronous: done once at start-up). */
export function loadTrustStore(caDir: string, opts: LoadTrustStoreOptions = {}): TrustStore {
  let names: string[];
  try {
    names = readdirSync(caDir).sort();
  } catch (e) {
    throw new PkiError(`cannot read CA directory ${caDir}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const certs: ParsedCertificate[] = [];
  const problems: TrustStoreProblem[] = [];
  for (const name of names) {
    if (!HASHED.test(name) && !PEM.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(join(caDir, name), 'latin1');
    } catch (e) {
      problems.push({ file: name, reason: `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})` });
      continue;
    }
    const r = caCertsFromPem(text);
    if (r.problem !== undefined) problems.push({ file: name, reason: r.problem });
    certs.push(...r.certs);
  }
  const crls = new CrlDirectory(caDir, opts.crlRecheckMs, opts.log);
  crls.refresh(Date.now());
  for (const p of crls.problems) problems.push(p);
  const store = buildTrustStore(certs, problems, crls);
  if (store.anchors.length === 0 && opts.allowEmpty !== true) {
    const detail = problems.length > 0 ? `; skipped: ${problems.map((p) => `${p.file} (${p.reason})`).join(', ')}` : '';
    throw new PkiError(`no usable CA certificate in ${caDir}${detail}`);
  }
  return store;
}

/** A trust store from PEM texts (tests, or a single CA file). */
export function trustStoreFromPems(pems: readonly string[]): TrustStore {
  const certs: ParsedCertificate[] = [];
  const problems: TrustStoreProblem[] = [];
  pems.forEach((p, i) => {
    const r = caCertsFromPem(p);
    if (r.problem !== undefined) problems.push({ file: `#${i}`, reason: r.problem });
    certs.push(...r.certs);
  });
  return buildTrustStore(certs, problems);
}

function caCertsFromPem(text: string): { certs: ParsedCertificate[]; problem?: string } {
  const blocks = pemBlocks(text);
  if (blocks.length === 0) return { certs: [], problem: 'no PEM certificate in the file' };
  const certs: ParsedCertificate[] = [];
  for (const der of blocks) {
    let c: ParsedCertificate;
    try {
      c = parseCertificate(der);
    } catch (e) {
      return { certs, problem: `not a valid certificate (${e instanceof Error ? e.message : 'parse error'})` };
    }
    if (!isCaCertificate(c)) return { certs, problem: `${c.subjectOneline} is not a CA certificate` };
    certs.push(c);
  }
  return { certs };
}

/**
 * A certificate may act as a CA if basicConstraints says so, or if it is an old
 * version 1 certificate (no extensions at all) that is self-issued: OpenSSL accepts
 * such roots as trust anchors.
 */
export function isCaCertificate(c: ParsedCertificate): boolean {
  if (c.basicConstraints !== undefined) return c.basicConstraints.ca;
  return c.version === 1 && canonicalEncoding(c.subject).equals(canonicalEncoding(c.issuer));
}

function buildTrustStore(
  all: readonly ParsedCertificate[],
  problems: TrustStoreProblem[],
  crls?: CrlDirectory,
): TrustStore {
  const byFingerprint = new Map<string, ParsedCertificate>();
  for (const c of all) byFingerprint.set(c.fingerprint256, c); // `<hash>.0` often links to `<alias>.pem`
  const anchors = [...byFingerprint.values()];
  const bySubject = new Map<string, ParsedCertificate[]>();
  for (const c of anchors) {
    const k = canonicalEncoding(c.subject).toString('hex');
    const list = bySubject.get(k);
    if (list === undefined) bySubject.set(k, [c]);
    else list.push(c);
  }
  return {
    anchors,
    problems,
    candidates: (issuer) => bySubject.get(canonicalEncoding(issuer).toString('hex')) ?? [],
    isAnchor: (cert) => byFingerprint.has(cert.fingerprint256),
    pems: anchors.map((c) => toPem(c.der)),
    revocation: (cert, issuer, now) => crls?.status(cert, issuer, now),
    refresh: (now) => crls?.refresh(now) ?? 0,
  };
}
