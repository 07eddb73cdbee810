/**
 * The set of trusted CA certificates, loaded from a grid CA directory
 * (`<hash>.0`, `<hash>.1`, ... as in /etc/grid-security/certificates) and/or `*.pem`
 * files. Every certificate found there is a trust anchor, intermediates included
 * (IGTF distributes intermediate CAs in the same directory). The CRLs there
 * (`<hash>.r0`, ...) are checked and followed while the service runs
 * (src/pki/revocation.ts). Signing policies, namespaces and other companions are
 * ignored. Files that cannot be used are reported in `problems` and skipped; a
 * directory that cannot be read, or that holds no usable CA, is an error.
 *
 * A store is one look at the certificates: it never changes its anchors. The running
 * service follows the directory with src/pki/live-trust-store.ts, which makes a new store
 * when the certificates change (the CRLs are shared between them).
 */
import { canonicalEncoding, type Rdn } from './dn.js';
import { toPem, type ParsedCertificate } from './certificate.js';
import { PkiError } from './pki-error.js';
import { CrlDirectory, type CrlLog, type RevocationStatus } from './revocation.js';
import { CaCertificateFiles, caCertsFromPem, isCaCertificate } from './ca-files.js';

export { isCaCertificate };

export interface TrustStoreProblem {
  /** File name inside the CA directory. */
  readonly file: string;
  readonly reason: string;
}

/** A trusted CA whose CRL is past its nextUpdate: every certificate it issued is refused. */
export interface ExpiredCrl {
  readonly ca: ParsedCertificate;
  readonly nextUpdate: Date;
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
  /** The trusted CAs whose CRL in force is past its nextUpdate at `now`. */
  expiredCrls(now: number): readonly ExpiredCrl[];
}

export interface LoadTrustStoreOptions {
  /** Accept a directory without any usable CA (the caller authenticates otherwise). */
  readonly allowEmpty?: boolean;
  /** Look at the CRLs again at most this often (ms); default DEFAULT_CRL_RECHECK_MS. */
  readonly crlRecheckMs?: number;
  /** Where CRL loads and problems are reported while the service runs. */
  readonly log?: CrlLog;
}

/** Load a CA directory once (synchronous); src/pki/live-trust-store.ts follows its changes. */
export function loadTrustStore(caDir: string, opts: LoadTrustStoreOptions = {}): TrustStore {
  const crls = new CrlDirectory(caDir, opts.crlRecheckMs, opts.log);
  return trustStoreOf(caDir, new CaCertificateFiles(caDir).scan(), crls, opts);
}

/**
 * The trust store of one scan of a CA directory with its CRLs (shared between the
 * successive stores of a directory: CRLs are followed on their own).
 */
export function trustStoreOf(
  caDir: string,
  scan: { readonly certs: readonly ParsedCertificate[]; readonly problems: readonly TrustStoreProblem[] },
  crls: CrlDirectory,
  opts: { readonly allowEmpty?: boolean } = {},
): TrustStore {
  crls.refresh(Date.now());
  const problems: TrustStoreProblem[] = scan.problems.map((p) => ({ file: p.file, reason: p.reason }));
  for (const p of crls.problems) problems.push(p);
  const store = buildTrustStore(scan.certs, problems, crls);
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
    expiredCrls: (now) => (crls === undefined ? [] : crls.expiredFor(anchors, now)),
  };
}
