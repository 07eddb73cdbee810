/**
 * Real VOMS proxies for tests, made by Debian's `voms-proxy-fake` (package
 * voms-clients): it signs an attribute certificate with a VOMS server certificate and
 * key we give it, exactly as a VOMS server would, and wraps it in an RFC 3820 proxy.
 * The PKI around it (CA, users, VOMS servers) is made here with the project's issuer.
 *
 * `CERES_REQUIRE_VOMS=1` (CI) turns a missing voms-proxy-fake into a failure.
 */
import { execFile } from 'node:child_process';
import { sign } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';
import { authenticateChain } from '../../../src/auth/authenticate-chain.js';
import type { VerifiedChainCache } from '../../../src/auth/chain-cache.js';
import type { X509Identity } from '../../../src/auth/identity.js';
import { VomsVerifier } from '../../../src/auth/voms/voms-verifier.js';
import type { TrustStore } from '../../../src/pki/trust-store.js';
import { OID_VOMS_AC_SEQ, decodeVomsExtension } from '../../../src/auth/voms/attribute-certificate.js';
import { caDirEntry } from '../../../src/pki/ca-dir.js';
import { parseCertificate, pemBlocks, toPem, type ParsedCertificate } from '../../../src/pki/certificate.js';
import { TAG, children, decodeOid, encodeOid, encodeTlv, parseDer, raw, type Tlv } from '../../../src/pki/der.js';
import { appendCn, toOneline } from '../../../src/pki/dn.js';
import { createCaCertificate, createEndEntityCertificate, issueCertificate } from '../../../src/pki/issue.js';
import {
  generateRsaKeyPair,
  importSigningKeyPem,
  keyObjectOf,
  privateKeyToPem,
  privateKeyToProxyPem,
} from '../../../src/pki/keys.js';
import { OID_PROXY_CERT_INFO, PROXY_POLICY, encodeProxyCertInfo } from '../../../src/pki/proxy-cert-info.js';
import { x509, type CryptoKeyPair } from '../../../src/pki/x509-lib.js';

const run = promisify(execFile);

export const VOMS_PROXY_FAKE = 'voms-proxy-fake';

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export function vomsRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CERES_REQUIRE_VOMS;
  return v !== undefined && v !== '' && v !== '0';
}

/** The `skip` option of a VOMS test suite: false where voms-proxy-fake runs or is required. */
export const vomsSkip: string | false =
  onPath(VOMS_PROXY_FAKE) || vomsRequired()
    ? false
    : 'voms-proxy-fake not installed: install the Debian package voms-clients to run the VOMS tests; CERES_REQUIRE_VOMS=1 makes this a failure';

export interface Cred {
  readonly dn: string;
  readonly der: Buffer;
  readonly cert: ParsedCertificate;
  readonly keys: CryptoKeyPair;
  readonly certFile: string;
  readonly keyFile: string;
}

export interface VomsWorld {
  readonly dir: string;
  readonly ca: Cred;
  /** Trusted CA directory (`<hash>.0`), for the trust store and voms-proxy-fake. */
  readonly caDir: string;
  /** The VOMS directory the verifier reads. */
  readonly vomsDir: string;
  user(cn: string): Promise<Cred>;
  /** A VOMS server certificate for `host` from `issuer` (the trusted CA by default). */
  server(host: string, issuer?: Cred): Promise<Cred>;
  /** A CA that is not trusted. */
  untrustedCa(): Promise<Cred>;
  /** An intermediate CA under the trusted one, itself in the trusted CA directory (as IGTF ships them). */
  intermediateCa(): Promise<Cred>;
  writeLsc(vo: string, host: string, lines: readonly string[]): void;
  removeLsc(vo: string, host: string): void;
}

let counter = 0;

async function save(dir: string, name: string, der: Buffer, keys: CryptoKeyPair): Promise<Cred> {
  const certFile = join(dir, `${name}-cert.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
  writeFileSync(certFile, toPem(der));
  writeFileSync(keyFile, privateKeyToPem(keys.privateKey), { mode: 0o600 });
  const cert = parseCertificate(der);
  return { dn: cert.subjectOneline, der, cert, keys, certFile, keyFile };
}

/** A trusted CA, its CA directory and an empty VOMS directory under `dir`. */
export async function vomsWorld(
  dir: string,
  ns = `/DC=org/DC=ceres-voms-${process.pid}-${++counter}`,
): Promise<VomsWorld> {
  const caKeys = await generateRsaKeyPair();
  // Valid from a day ago: tests look at the chain at earlier times too.
  const now = new Date(Date.now() - 24 * 3600 * 1000);
  const ca = await save(dir, 'ca', await createCaCertificate({ dn: `${ns}/CN=Test CA`, keys: caKeys, now }), caKeys);
  const caDir = join(dir, 'certificates');
  mkdirSync(caDir, { recursive: true });
  const entry = caDirEntry(ca.der);
  writeFileSync(join(caDir, entry.certFile), entry.certPem);
  const vomsDir = join(dir, 'vomsdir');
  mkdirSync(vomsDir, { recursive: true });
  const endEntity = async (name: string, dn: string, kind: 'user' | 'host', issuer: Cred): Promise<Cred> => {
    const keys = await generateRsaKeyPair();
    const der = await createEndEntityCertificate({
      dn,
      kind,
      publicKey: keys.publicKey,
      issuer: { certDer: issuer.der, key: issuer.keys.privateKey },
      now,
      days: 30,
    });
    return save(dir, name, der, keys);
  };
  return {
    dir,
    ca,
    caDir,
    vomsDir,
    user: (cn) => endEntity(`user-${cn.replace(/\W/g, '_')}`, `${ns}/CN=${cn}`, 'user', ca),
    server: (host, issuer = ca) => endEntity(`voms-${host}-${++counter}`, `${ns}/CN=${host}`, 'host', issuer),
    untrustedCa: async () => {
      const keys = await generateRsaKeyPair();
      return save(
        dir,
        `rogue-ca-${++counter}`,
        await createCaCertificate({ dn: `${ns}/CN=Rogue CA`, keys, now }),
        keys,
      );
    },
    intermediateCa: async () => {
      const keys = await generateRsaKeyPair();
      const der = await issueCertificate({
        subject: `${ns}/CN=Intermediate CA ${++counter}`,
        publicKey: keys.publicKey,
        issuer: { certDer: ca.der, key: ca.keys.privateKey },
        notBefore: now,
        notAfter: new Date(now.getTime() + 365 * 24 * 3600 * 1000),
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        ],
      });
      const cred = await save(dir, `intermediate-${counter}`, der, keys);
      const e = caDirEntry(der);
      writeFileSync(join(caDir, e.certFile), e.certPem);
      return cred;
    },
    writeLsc: (vo, host, lines) => {
      mkdirSync(join(vomsDir, vo), { recursive: true });
      writeFileSync(join(vomsDir, vo, `${host}.lsc`), `${lines.join('\n')}\n`);
    },
    removeLsc: (vo, host) => rmSync(join(vomsDir, vo, `${host}.lsc`), { force: true }),
  };
}

/** A VOMS server certificate for `host` issued by a CA given by its files (the service's dev PKI), written under `dir`. */
export async function serverFromCaFiles(
  dir: string,
  caCertFile: string,
  caKeyFile: string,
  host: string,
): Promise<Cred> {
  const caDer = pemBlocks(readFileSync(caCertFile, 'utf8'))[0] as Buffer;
  const caKey = await importSigningKeyPem(readFileSync(caKeyFile, 'utf8'));
  const keys = await generateRsaKeyPair();
  const dn = parseCertificate(caDer).subjectOneline.replace(/\/CN=[^/]*$/, `/CN=${host}`);
  const der = await createEndEntityCertificate({
    dn,
    kind: 'host',
    publicKey: keys.publicKey,
    issuer: { certDer: caDer, key: caKey },
    days: 30,
  });
  return save(dir, `voms-${host}-${++counter}`, der, keys);
}

export interface FakeProxyOptions {
  readonly vo: string;
  readonly fqans: readonly string[];
  readonly server: { readonly certFile: string; readonly keyFile: string };
  /** Host name in the AC's policy authority (`vo://host:15000`). */
  readonly host: string;
  /** Legacy VOMS AC encoding (holder named by the user's subject). */
  readonly oldFormat?: boolean;
  /** Hours of the proxy (default 12). */
  readonly hours?: number;
  /** Hours of the AC. */
  readonly vomslife?: number;
  /** Start of the AC this long ago (`H:MM`). */
  readonly pastac?: string;
  /** Start of the proxy this long ago (`H:MM`). */
  readonly pastproxy?: string;
  /** `-target HOST`: voms-proxy-fake then writes a critical target extension (whose list it leaves empty). */
  readonly target?: string;
  /** `-acextension OID[/true]`: an extra AC extension, critical with `/true`. */
  readonly acExtension?: string;
}

export interface Proxy {
  /** The proxy file: proxy certificate, its key, the user certificate. */
  readonly pem: string;
  /** DER certificates, leaf first. */
  readonly ders: Buffer[];
}

/** A VOMS proxy of `user` made by voms-proxy-fake. */
export function fakeProxy(w: VomsWorld, user: Cred, o: FakeProxyOptions): Promise<Proxy> {
  return runVomsProxyFake(w.dir, w.caDir, user, o);
}

/** voms-proxy-fake for a user given by its certificate and key files; the proxy is written under `dir`. */
export async function runVomsProxyFake(
  dir: string,
  caDir: string,
  user: { readonly certFile: string; readonly keyFile: string },
  o: FakeProxyOptions,
): Promise<Proxy> {
  const out = join(dir, `proxy-${++counter}.pem`);
  const args = ['-cert', user.certFile, '-key', user.keyFile, '-certdir', caDir, '-out', out, '-rfc', '-q'];
  args.push('-hostcert', o.server.certFile, '-hostkey', o.server.keyFile, '-voms', o.vo, '-uri', `${o.host}:15000`);
  for (const f of o.fqans) args.push('-fqan', f);
  if (o.oldFormat !== true) args.push('-newformat');
  if (o.hours !== undefined) args.push('-hours', String(o.hours));
  if (o.vomslife !== undefined) args.push('-vomslife', String(o.vomslife));
  if (o.pastac !== undefined) args.push('-pastac', o.pastac);
  if (o.pastproxy !== undefined) args.push('-pastproxy', o.pastproxy);
  if (o.target !== undefined) args.push('-target', o.target);
  if (o.acExtension !== undefined) args.push('-acextension', o.acExtension);
  // RANDFILE: voms-proxy-fake complains about a missing ~/.rnd otherwise (harmless).
  await run(VOMS_PROXY_FAKE, args, { timeout: 60_000, env: { ...process.env, RANDFILE: join(dir, '.rnd') } });
  const pem = readFileSync(out, 'utf8');
  return { pem, ders: pemBlocks(pem) };
}

/** The VOMS extension value (the AC sequence) of a proxy's leaf. */
export function acExtension(p: Proxy): Uint8Array {
  const v = parseCertificate(p.ders[0] as Buffer).extensions.get(OID_VOMS_AC_SEQ)?.value;
  if (v === undefined) throw new Error('the proxy carries no VOMS extension');
  return v;
}

/**
 * A proxy of `signer` carrying `acSeq` as its VOMS extension (or none): to move a real
 * AC into another user's proxy, or to carry a modified one. The signer is a user
 * (a proxy of the end-entity certificate) or a proxy (a proxy of a proxy, signed with
 * the key in the proxy file, as a delegated credential is extended).
 */
export async function proxyWithAc(
  signer: Cred | Proxy,
  acSeq: Uint8Array | undefined,
  /** Start of the proxy's validity (default five minutes ago). */
  notBefore: Date = new Date(Date.now() - 5 * 60 * 1000),
): Promise<Proxy> {
  const [signerDer, key, below] =
    'pem' in signer
      ? [signer.ders[0] as Buffer, await importSigningKeyPem(signer.pem), signer.ders]
      : [signer.der, signer.keys.privateKey, [signer.der]];
  const keys = await generateRsaKeyPair();
  const serial = BigInt(Math.floor(Math.random() * 2 ** 30) + 1);
  const exts: x509.Extension[] = [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.Extension(OID_PROXY_CERT_INFO, true, encodeProxyCertInfo({ policyLanguage: PROXY_POLICY.inheritAll })),
  ];
  if (acSeq !== undefined) exts.push(new x509.Extension(OID_VOMS_AC_SEQ, false, Buffer.from(acSeq)));
  const der = await issueCertificate({
    subject: appendCn(parseCertificate(signerDer).subjectDer, String(serial)),
    publicKey: keys.publicKey,
    issuer: { certDer: signerDer, key },
    notBefore,
    notAfter: new Date(Date.now() + 12 * 3600 * 1000),
    serial,
    extensions: exts,
  });
  return {
    pem: toPem(der) + privateKeyToProxyPem(keys.privateKey) + below.map((d) => toPem(d)).join(''),
    ders: [der, ...below],
  };
}

/** The attribute certificates (DER) of a proxy's VOMS extension, in order. */
export function acsOf(p: Proxy): Uint8Array[] {
  return decodeVomsExtension(acExtension(p)).map((ac) => ac.der);
}

/** A VOMS extension value holding `acs` in order, as voms-proxy-init writes several VOs (SEQUENCE OF SEQUENCE OF AC). */
export function acSequence(...acs: readonly Uint8Array[]): Buffer {
  return encodeTlv(TAG.SEQUENCE, encodeTlv(TAG.SEQUENCE, ...acs));
}

/**
 * A real AC with fields of its acinfo changed, signed again with the key of the VOMS
 * server `server` (the one that issued it): what that server would have issued with
 * those fields. `edit` gets the DER of each acinfo field (version, holder, issuer,
 * signature, serialNumber, validity, attributes, extensions) and returns the new list.
 */
export function resignAc(acDer: Uint8Array, server: Cred, edit: (fields: Buffer[]) => Buffer[]): Buffer {
  const [info, alg] = children(parseDer(acDer));
  const fields = children(info as Tlv).map((t) => Buffer.from(raw(t)));
  const acinfo = encodeTlv(TAG.SEQUENCE, ...edit(fields));
  const algOid = decodeOid(children(alg as Tlv)[0] as Tlv);
  if (algOid !== SHA256_WITH_RSA) throw new Error(`resignAc: unexpected AC signature algorithm ${algOid}`);
  const signature = sign('sha256', acinfo, keyObjectOf(server.keys.privateKey));
  return encodeTlv(TAG.SEQUENCE, acinfo, raw(alg as Tlv), encodeTlv(TAG.BIT_STRING, Buffer.from([0]), signature));
}

const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';

/** One AC extension (Extension ::= SEQUENCE { OID, critical BOOLEAN DEFAULT FALSE, OCTET STRING }). */
export function acExtensionDer(oid: string, critical: boolean, value: Uint8Array): Buffer {
  return encodeTlv(
    TAG.SEQUENCE,
    encodeOid(oid),
    ...(critical ? [encodeTlv(TAG.BOOLEAN, Buffer.from([0xff]))] : []),
    encodeTlv(TAG.OCTET_STRING, value),
  );
}

/** `bytes` with the first occurrence of `find` (text) changed in its first byte. */
export function flipIn(bytes: Uint8Array, find: string): Uint8Array {
  const copy = Buffer.from(bytes);
  const at = copy.indexOf(Buffer.from(find, 'utf8'));
  if (at < 0) throw new Error(`${find} not found`);
  copy[at] = (copy[at] as number) ^ 0x01;
  return copy;
}

/** SHA-256 fingerprints of a chain in the spelling the TLS layer uses (any stable one works). */
export function fingerprints(ders: readonly Buffer[]): string[] {
  return ders.map((d) => parseCertificate(d).fingerprint256);
}

export interface LogLine {
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

/**
 * Authentication of proxies as the TLS listener does it (authenticateChain with a
 * VomsVerifier on the world's VOMS directory), keeping the verifier's log lines.
 */
export class VomsCheck {
  readonly logs: LogLine[] = [];
  readonly log = {
    info: (obj: object, msg: string): void => void this.logs.push({ obj: obj as Record<string, unknown>, msg }),
    warn: (obj: object, msg: string): void => void this.logs.push({ obj: obj as Record<string, unknown>, msg }),
  };

  constructor(
    readonly w: VomsWorld,
    readonly trust: TrustStore,
    readonly hostnames?: readonly string[],
  ) {}

  /** A verifier that looks at the VOMS directory (the world's by default) on every call. */
  verifier(dir: string = this.w.vomsDir): VomsVerifier {
    const v = new VomsVerifier({
      dir,
      recheckMs: 0,
      log: this.log,
      ...(this.hostnames === undefined ? {} : { hostnames: this.hostnames }),
    });
    v.refresh(Date.now());
    return v;
  }

  /** The outcome of authenticating `p`, which must succeed. */
  auth(
    p: Proxy,
    v: VomsVerifier = this.verifier(),
    now = Date.now(),
    cache?: VerifiedChainCache,
    trust = this.trust,
  ): X509Identity {
    const r = authenticateChain({ ders: p.ders, fingerprints: fingerprints(p.ders) }, trust, cache, now, v);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.identity;
  }

  /** The reasons of the `VOMS attributes ignored` lines logged since the last call. */
  takeReasons(): string[] {
    const out = this.logs.filter((l) => l.msg === 'VOMS attributes ignored').map((l) => String(l.obj.reason));
    this.logs.length = 0;
    return out;
  }

  /** The client is authenticated, without attributes, and the reason (matching `why`) is logged. */
  ignored(p: Proxy, why: RegExp, now?: number): X509Identity {
    this.logs.length = 0;
    const id = this.auth(p, this.verifier(), now);
    assert.equal(id.voms, undefined);
    const reasons = this.takeReasons();
    assert.ok(
      reasons.some((r) => why.test(r)),
      `no 'VOMS attributes ignored' line matching ${String(why)}; got ${JSON.stringify(reasons)}`,
    );
    return id;
  }
}

/**
 * A VOMS world for the real service in `work`: the service's development PKI made in
 * `work/state/pki` (so start the service with that state folder), a VOMS server of that CA
 * trusted for each VO in `work/vomsdir`, and for each VO a proxy of the development user
 * holding the FQAN `/<vo>`; `proxy(vo)` is its file.
 */
export async function devUserVoProxies(
  work: string,
  vos: readonly string[],
): Promise<{ readonly vomsDir: string; proxy(vo: string): string }> {
  const { initDevPki } = await import('../../../src/pki/dev-pki.js');
  const host = 'voms.example.org';
  const pki = await initDevPki(join(work, 'state', 'pki'));
  const server = await serverFromCaFiles(work, pki.files.caCert, pki.files.caKey, host);
  const vomsDir = join(work, 'vomsdir');
  const user = { certFile: pki.files.userCert, keyFile: pki.files.userKey };
  const proxy = (vo: string): string => join(work, `proxy-of-${vo}.pem`);
  for (const vo of vos) {
    mkdirSync(join(vomsDir, vo), { recursive: true });
    writeFileSync(join(vomsDir, vo, `${host}.lsc`), `${server.dn}\n${toOneline(server.cert.issuer)}\n`);
    const p = await runVomsProxyFake(work, pki.files.certificatesDir, user, {
      vo,
      fqans: [`/${vo}/Role=NULL/Capability=NULL`],
      server,
      host,
    });
    writeFileSync(proxy(vo), p.pem, { mode: 0o600 });
  }
  return { vomsDir, proxy };
}
