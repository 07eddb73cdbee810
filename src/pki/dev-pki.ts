/**
 * The embedded development PKI: a throw-away CA, a host certificate for localhost,
 * a user certificate with an RFC 3820 proxy, and a grid CA directory, so that
 * `ceres serve` works out of the box with curl, pyarcrest and the ARC client:
 *
 *   ca.pem cakey.pem                    CA (10 years), key 0600
 *   hostcert.pem hostkey.pem            host, SAN DNS:localhost IP:127.0.0.1 [+ hostname]
 *   usercert.pem userkey.pem            user (1 year)
 *   userproxy.pem                       proxy cert, proxy key, user cert (as arcproxy writes it), 7 days
 *   certificates/<hash>.0 + .signing_policy   X509_CERT_DIR for the ARC client
 *   NAME-cert.pem NAME-key.pem NAME-proxy.pem  further users (addDevUser)
 *
 * Every PKI gets its own namespace `/O=Ceres Development/OU=<random id>` so that the
 * CAs of two installations never share a subject hash or user DNs.
 *
 * Crash safety: a new PKI is built in a sibling temporary directory and renamed into
 * place, so the directory either holds a complete PKI or does not exist. Single files
 * (renewals, users) are written to a temporary name and renamed.
 */
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { isIP } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { caDirEntry } from './ca-dir.js';
import { parseCertificate, pemBlocks, toPem, type ParsedCertificate } from './certificate.js';
import { onelineOf, parseName, toOneline } from './dn.js';
import { createCaCertificate, createEndEntityCertificate, createProxyCertificate, DAY_MS } from './issue.js';
import { generateRsaKeyPair, importSigningKeyPem, privateKeyToPem, privateKeyToProxyPem } from './keys.js';
import { PkiError } from './pki-error.js';
import type { CryptoKey } from './x509-lib.js';

export { DEV_PKI_FILES } from './dev-pki-files.js';
import { DEV_PKI_FILES } from './dev-pki-files.js';

const CA_DAYS = 3650;
const CERT_DAYS = 365;
const PROXY_SECONDS = 7 * 24 * 3600;
/** ensureDevPki renews host and user certificates this long before they expire... */
const CERT_RENEW_MS = 30 * DAY_MS;
/** ...and the user proxy this long before. */
const PROXY_RENEW_MS = DAY_MS;
const DEFAULT_USER_CN = 'Ceres Dev User';
/** A temporary build directory older than this was left by a crash. */
const STALE_TEMP_MS = 10 * 60 * 1000;

export interface DevPkiOptions {
  /** Another DNS name or IP address for the host certificate (besides localhost and 127.0.0.1). */
  readonly hostname?: string;
  /** initDevPki only: replace an existing PKI or a non-empty directory. */
  readonly force?: boolean;
  readonly now?: Date;
}

export interface DevPki {
  /** Absolute directory. */
  readonly dir: string;
  readonly files: {
    readonly caCert: string;
    readonly caKey: string;
    readonly hostCert: string;
    readonly hostKey: string;
    readonly userCert: string;
    readonly userKey: string;
    readonly userProxy: string;
    /** The X509_CERT_DIR. */
    readonly certificatesDir: string;
    readonly caHashCert: string;
    readonly caSigningPolicy: string;
  };
  readonly caDn: string;
  readonly hostDn: string;
  readonly userDn: string;
  /** OpenSSL subject hash of the CA. */
  readonly caHash: string;
  /** Absolute paths written by this call; empty when everything was reused. */
  readonly written: readonly string[];
}

export interface DevUser {
  readonly dn: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly proxyFile: string;
  readonly written: readonly string[];
}

/** Create a new development PKI in `dir` (which must not exist or be empty, unless `force`). */
export async function initDevPki(dir: string, opts: DevPkiOptions = {}): Promise<DevPki> {
  const abs = resolve(dir);
  const existing = await entries(abs);
  if (existing !== undefined && existing.length > 0 && opts.force !== true) {
    throw new PkiError(
      existing.includes(DEV_PKI_FILES.caCert)
        ? `${abs} already holds a PKI (use --force to replace it)`
        : `${abs} is not empty`,
    );
  }
  return buildInPlace(abs, opts);
}

/**
 * The PKI in `dir`, created on first use and reused afterwards. Expired or expiring
 * host/user certificates and the user proxy are renewed under the same CA, so
 * clients' CA directories stay valid. A directory that does not hold a complete PKI
 * (e.g. left by a crash of another tool) is moved aside to `<dir>.broken-<time>`.
 */
export async function ensureDevPki(dir: string, opts: Omit<DevPkiOptions, 'force'> = {}): Promise<DevPki> {
  const abs = resolve(dir);
  const now = opts.now ?? new Date();
  await removeStaleTemps(abs, Date.now());
  const existing = await entries(abs);
  if (existing === undefined || existing.length === 0) {
    try {
      return await buildInPlace(abs, opts);
    } catch (e) {
      // Another process may have won the race to create it: use theirs.
      const theirs = await loadDevPki(abs).catch(() => undefined);
      if (theirs === undefined) throw e;
      return describe(theirs, []);
    }
  }
  const loaded = await loadDevPki(abs).catch(() => undefined);
  if (loaded === undefined || loaded.ca.notAfter.getTime() - now.getTime() < CERT_RENEW_MS) {
    await rename(abs, `${abs}.broken-${stamp(now)}`);
    return buildInPlace(abs, opts);
  }
  return renew(loaded, opts, now);
}

/** Add a user `NAME-cert.pem NAME-key.pem NAME-proxy.pem` signed by the PKI's CA. */
export async function addDevUser(
  dir: string,
  name: string,
  opts: { readonly force?: boolean; readonly now?: Date } = {},
): Promise<DevUser> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new PkiError(
      'a user name is 1-64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit',
    );
  }
  const abs = resolve(dir);
  const pki = await loadDevPki(abs);
  const certFile = join(abs, `${name}-cert.pem`);
  const keyFile = join(abs, `${name}-key.pem`);
  const proxyFile = join(abs, `${name}-proxy.pem`);
  if (opts.force !== true) {
    for (const f of [certFile, keyFile, proxyFile]) {
      if (await exists(f)) throw new PkiError(`${f} already exists (use --force to replace it)`);
    }
  }
  const dn = `${pki.namespace}/CN=${name}`;
  const now = opts.now ?? new Date();
  const [keys, proxyKeys] = await Promise.all([generateRsaKeyPair(), generateRsaKeyPair()]);
  const certDer = await createEndEntityCertificate({
    dn,
    publicKey: keys.publicKey,
    issuer: pki.issuer,
    kind: 'user',
    days: CERT_DAYS,
    now,
  });
  const proxyPem = await makeProxyFile(certDer, keys.privateKey, proxyKeys, now);
  await writeAtomic(keyFile, privateKeyToPem(keys.privateKey), 0o600);
  await writeAtomic(certFile, toPem(certDer), 0o644);
  await writeAtomic(proxyFile, proxyPem, 0o600);
  return { dn, certFile, keyFile, proxyFile, written: [certFile, keyFile, proxyFile] };
}

// ---------------------------------------------------------------- building

async function buildInPlace(abs: string, opts: DevPkiOptions): Promise<DevPki> {
  const now = opts.now ?? new Date();
  await mkdir(dirname(abs), { recursive: true });
  const tmp = `${abs}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(tmp, { mode: 0o755 });
    await writeNewPki(tmp, opts, now);
    if (opts.force === true && (await entries(abs)) !== undefined) {
      // Replace: move the old one out of the way first (rename cannot replace a non-empty directory).
      const old = `${abs}.old-${randomBytes(4).toString('hex')}`;
      await rename(abs, old);
      await rename(tmp, abs);
      await rm(old, { recursive: true, force: true });
    } else {
      await rename(tmp, abs);
    }
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
  const pki = await loadDevPki(abs);
  const f = pki.files;
  return describe(pki, [
    f.caCert,
    f.caKey,
    f.hostCert,
    f.hostKey,
    f.userCert,
    f.userKey,
    f.userProxy,
    f.caHashCert,
    f.caSigningPolicy,
  ]);
}

async function writeNewPki(dir: string, opts: DevPkiOptions, now: Date): Promise<void> {
  const namespace = `/O=Ceres Development/OU=${randomBytes(4).toString('hex')}`;
  const [caKeys, hostKeys, userKeys, proxyKeys] = await Promise.all([
    generateRsaKeyPair(),
    generateRsaKeyPair(),
    generateRsaKeyPair(),
    generateRsaKeyPair(),
  ]);
  const caDer = await createCaCertificate({
    dn: `${namespace}/CN=Ceres Development CA`,
    keys: caKeys,
    days: CA_DAYS,
    now,
  });
  const issuer = { certDer: caDer, key: caKeys.privateKey };
  const hostDer = await makeHostCert(namespace, hostKeys.publicKey, issuer, opts.hostname, now);
  const userDer = await createEndEntityCertificate({
    dn: `${namespace}/CN=${DEFAULT_USER_CN}`,
    publicKey: userKeys.publicKey,
    issuer,
    kind: 'user',
    days: CERT_DAYS,
    now,
  });
  const proxyPem = await makeProxyFile(userDer, userKeys.privateKey, proxyKeys, now);
  const F = DEV_PKI_FILES;
  await writeFileMode(join(dir, F.caKey), privateKeyToPem(caKeys.privateKey), 0o600);
  await writeFileMode(join(dir, F.caCert), toPem(caDer), 0o644);
  await writeFileMode(join(dir, F.hostKey), privateKeyToPem(hostKeys.privateKey), 0o600);
  await writeFileMode(join(dir, F.hostCert), toPem(hostDer), 0o644);
  await writeFileMode(join(dir, F.userKey), privateKeyToPem(userKeys.privateKey), 0o600);
  await writeFileMode(join(dir, F.userCert), toPem(userDer), 0o644);
  await writeFileMode(join(dir, F.userProxy), proxyPem, 0o600);
  const entry = caDirEntry(caDer);
  await mkdir(join(dir, F.certificates), { mode: 0o755 });
  await writeFileMode(join(dir, F.certificates, entry.certFile), entry.certPem, 0o644);
  await writeFileMode(join(dir, F.certificates, entry.signingPolicyFile), entry.signingPolicy, 0o644);
}

function hostNames(hostname: string | undefined): { dns: string[]; ips: string[] } {
  const dns = ['localhost'];
  const ips = ['127.0.0.1'];
  if (hostname !== undefined && hostname !== '') {
    if (isIP(hostname) !== 0) {
      if (!ips.includes(hostname)) ips.push(hostname);
    } else if (!dns.includes(hostname.toLowerCase())) {
      dns.push(hostname.toLowerCase());
    }
  }
  return { dns, ips };
}

async function makeHostCert(
  namespace: string,
  publicKey: CryptoKey,
  issuer: { certDer: Uint8Array; key: CryptoKey },
  hostname: string | undefined,
  now: Date,
): Promise<Buffer> {
  const { dns, ips } = hostNames(hostname);
  const cn = hostname !== undefined && hostname !== '' && isIP(hostname) === 0 ? hostname.toLowerCase() : 'localhost';
  if (!/^[A-Za-z0-9.-]+$/.test(cn)) throw new PkiError(`'${hostname ?? ''}' is not a valid host name`);
  return createEndEntityCertificate({
    dn: `${namespace}/CN=${cn}`,
    publicKey,
    issuer,
    kind: 'host',
    dnsNames: dns,
    ipAddresses: ips,
    days: CERT_DAYS,
    now,
  });
}

/** A proxy file as arcproxy writes it: proxy certificate, proxy key, then the signer's certificate. */
async function makeProxyFile(
  signerDer: Buffer,
  signerKey: CryptoKey,
  proxyKeys: { privateKey: CryptoKey; publicKey: CryptoKey },
  now: Date,
): Promise<string> {
  const proxyDer = await createProxyCertificate(signerDer, signerKey, proxyKeys.publicKey, {
    lifetimeSeconds: PROXY_SECONDS,
    now,
  });
  return toPem(proxyDer) + privateKeyToProxyPem(proxyKeys.privateKey) + toPem(signerDer);
}

// ---------------------------------------------------------------- loading and renewal

interface LoadedPki {
  readonly dir: string;
  readonly files: DevPki['files'];
  readonly namespace: string;
  readonly ca: ParsedCertificate;
  readonly issuer: { readonly certDer: Buffer; readonly key: CryptoKey };
  readonly host: ParsedCertificate;
  readonly user: ParsedCertificate;
  readonly userKeyPem: string;
  readonly proxy: ParsedCertificate;
  readonly proxyIssuerFingerprint: string | undefined;
  readonly caHash: string;
}

function filesOf(dir: string, hash: string): DevPki['files'] {
  const F = DEV_PKI_FILES;
  const certificatesDir = join(dir, F.certificates);
  return {
    caCert: join(dir, F.caCert),
    caKey: join(dir, F.caKey),
    hostCert: join(dir, F.hostCert),
    hostKey: join(dir, F.hostKey),
    userCert: join(dir, F.userCert),
    userKey: join(dir, F.userKey),
    userProxy: join(dir, F.userProxy),
    certificatesDir,
    caHashCert: join(certificatesDir, `${hash}.0`),
    caSigningPolicy: join(certificatesDir, `${hash}.signing_policy`),
  };
}

/** Read and cross-check a PKI directory; throws PkiError when anything is missing or inconsistent. */
async function loadDevPki(dir: string): Promise<LoadedPki> {
  const F = DEV_PKI_FILES;
  const read = async (name: string): Promise<string> => {
    try {
      return await readFile(join(dir, name), 'utf8');
    } catch {
      throw new PkiError(`${join(dir, name)} is missing or unreadable`);
    }
  };
  const cert = (text: string, name: string): ParsedCertificate => {
    const der = pemBlocks(text)[0];
    if (der === undefined) throw new PkiError(`${join(dir, name)} holds no certificate`);
    return parseCertificate(der);
  };
  const matches = (c: ParsedCertificate, keyPem: string, name: string): void => {
    const spki = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    if (!spki.equals(Buffer.from(c.spkiDer)))
      throw new PkiError(`${join(dir, name)} does not belong to its certificate`);
  };
  const caPem = await read(F.caCert);
  const caKeyPem = await read(F.caKey);
  const ca = cert(caPem, F.caCert);
  matches(ca, caKeyPem, F.caKey);
  const host = cert(await read(F.hostCert), F.hostCert);
  matches(host, await read(F.hostKey), F.hostKey);
  const user = cert(await read(F.userCert), F.userCert);
  const userKeyPem = await read(F.userKey);
  matches(user, userKeyPem, F.userKey);
  const proxyText = await read(F.userProxy);
  const proxyChain = pemBlocks(proxyText);
  const proxy = cert(proxyText, F.userProxy);
  matches(proxy, proxyText, F.userProxy);
  for (const c of [host, user]) {
    if (!c.node.checkIssued(ca.node) || !c.node.verify(ca.node.publicKey))
      throw new PkiError(`${dir}: certificates not issued by its CA`);
  }
  const entry = caDirEntry(ca.der);
  const hashed = await read(join(F.certificates, entry.certFile));
  if (!pemBlocks(hashed)[0]?.equals(ca.der))
    throw new PkiError(`${join(dir, F.certificates, entry.certFile)} is not the CA certificate`);
  await read(join(F.certificates, entry.signingPolicyFile));
  return {
    dir,
    files: filesOf(dir, entry.hash),
    namespace: toOneline(parseName(ca.subjectDer).slice(0, -1)),
    ca,
    issuer: { certDer: ca.der, key: await importSigningKeyPem(caKeyPem) },
    host,
    user,
    userKeyPem,
    proxy,
    proxyIssuerFingerprint: proxyChain[1] === undefined ? undefined : parseCertificate(proxyChain[1]).fingerprint256,
    caHash: entry.hash,
  };
}

async function renew(pki: LoadedPki, opts: DevPkiOptions, now: Date): Promise<DevPki> {
  const written: string[] = [];
  const t = now.getTime();
  const { dns, ips } = hostNames(opts.hostname);
  const sans = new Set((pki.host.node.subjectAltName ?? '').split(', '));
  const covered = dns.every((d) => sans.has(`DNS:${d}`)) && ips.every((ip) => sans.has(`IP Address:${ip}`));
  if (!covered || pki.host.notAfter.getTime() - t < CERT_RENEW_MS) {
    const keys = await generateRsaKeyPair();
    const der = await makeHostCert(pki.namespace, keys.publicKey, pki.issuer, opts.hostname, now);
    await writeAtomic(pki.files.hostKey, privateKeyToPem(keys.privateKey), 0o600);
    await writeAtomic(pki.files.hostCert, toPem(der), 0o644);
    written.push(pki.files.hostCert, pki.files.hostKey);
  }
  let user = pki.user;
  if (user.notAfter.getTime() - t < CERT_RENEW_MS) {
    const der = await createEndEntityCertificate({
      dn: onelineOf(user.subjectDer),
      publicKey: user.spkiDer,
      issuer: pki.issuer,
      kind: 'user',
      days: CERT_DAYS,
      now,
    });
    await writeAtomic(pki.files.userCert, toPem(der), 0o644);
    written.push(pki.files.userCert);
    user = parseCertificate(der);
  }
  if (pki.proxy.notAfter.getTime() - t < PROXY_RENEW_MS || pki.proxyIssuerFingerprint !== user.fingerprint256) {
    const proxyPem = await makeProxyFile(
      user.der,
      await importSigningKeyPem(pki.userKeyPem),
      await generateRsaKeyPair(),
      now,
    );
    await writeAtomic(pki.files.userProxy, proxyPem, 0o600);
    written.push(pki.files.userProxy);
  }
  return describe(await loadDevPki(pki.dir), written);
}

function describe(pki: LoadedPki, written: string[]): DevPki {
  return {
    dir: pki.dir,
    files: pki.files,
    caDn: pki.ca.subjectOneline,
    hostDn: pki.host.subjectOneline,
    userDn: pki.user.subjectOneline,
    caHash: pki.caHash,
    written,
  };
}

// ---------------------------------------------------------------- files

async function entries(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') throw new PkiError(`${dir} exists and is not a directory`);
    throw e;
  }
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/**
 * Temporary build directories left by a crash during creation. Young ones may belong
 * to another process building the same PKI right now, so only old ones go.
 */
async function removeStaleTemps(abs: string, now: number): Promise<void> {
  const parent = dirname(abs);
  const prefix = `${basename(abs)}.tmp-`;
  for (const n of (await entries(parent)) ?? []) {
    if (!n.startsWith(prefix)) continue;
    const st = await stat(join(parent, n)).catch(() => undefined);
    if (st !== undefined && now - st.mtimeMs > STALE_TEMP_MS)
      await rm(join(parent, n), { recursive: true, force: true });
  }
}

async function writeFileMode(path: string, data: string, mode: number): Promise<void> {
  await writeFile(path, data, { mode, flag: 'wx' });
  await chmod(path, mode); // the umask may have removed bits we want (0644 files)
}

async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  // exactMode: the umask may have removed bits we want (0644 files).
  await writeFileAtomic(path, data, { mode, exactMode: true });
}

function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}
