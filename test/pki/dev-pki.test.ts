import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEV_PKI_FILES, addDevUser, ensureDevPki, initDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { PkiError } from '../../src/pki/pki-error.js';
import { parseCertificate, pemBlocks } from '../../src/pki/certificate.js';
import { parseName } from '../../src/pki/dn.js';
import { loadTrustStore } from '../../src/pki/trust-store.js';
import { verifyClientChain } from '../../src/auth/x509-chain.js';
import { OID_PROXY_CERT_INFO, PROXY_POLICY } from '../../src/pki/proxy-cert-info.js';
import { tempDir } from '../helpers/pki.js';

const run = promisify(execFile);
const openssl = async (...args: string[]): Promise<string> => (await run('openssl', args)).stdout;
const DAY = 24 * 3600 * 1000;
const SHA256_RSA = '1.2.840.113549.1.1.11';

const root = tempDir(after, 'ceres-devpki-');
let seq = 0;
const fresh = (): string => join(root, `p${seq++}`, 'pki');

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

function proxyChain(file: string): Buffer[] {
  return pemBlocks(readFileSync(file, 'utf8'));
}

describe('initDevPki', () => {
  let pki: DevPki;
  before(async () => {
    pki = await initDevPki(fresh());
  });

  it('writes every file, private keys readable by the owner only', () => {
    const F = DEV_PKI_FILES;
    for (const f of [F.caCert, F.caKey, F.hostCert, F.hostKey, F.userCert, F.userKey, F.userProxy])
      assert.ok(existsSync(join(pki.dir, f)), f);
    for (const f of [pki.files.caKey, pki.files.hostKey, pki.files.userKey, pki.files.userProxy])
      assert.equal(mode(f), 0o600, f);
    assert.equal(mode(pki.files.caCert), 0o644);
    assert.deepEqual(readdirSync(pki.files.certificatesDir).sort(), [
      `${pki.caHash}.0`,
      `${pki.caHash}.signing_policy`,
    ]);
    assert.equal(pki.written.length, 9);
  });

  it('names the CA file after the OpenSSL subject hash, with a signing policy for its namespace', async () => {
    assert.equal((await openssl('x509', '-in', pki.files.caCert, '-noout', '-hash')).trim(), pki.caHash);
    assert.equal(readFileSync(pki.files.caHashCert, 'utf8'), readFileSync(pki.files.caCert, 'utf8'));
    const policy = readFileSync(pki.files.caSigningPolicy, 'utf8');
    assert.match(policy, new RegExp(`access_id_CA\\s+X509\\s+'${pki.caDn}'`));
    assert.match(policy, /pos_rights\s+globus\s+CA:sign/);
    const ns = pki.caDn.replace(/\/CN=[^/]*$/, '');
    assert.match(policy, new RegExp(`cond_subjects\\s+globus\\s+'"${ns}/\\*"'`));
    assert.ok(pki.userDn.startsWith(`${ns}/`) && pki.hostDn.startsWith(`${ns}/`));
  });

  it('makes RSA 2048 / SHA-256 certificates with the promised lifetimes', () => {
    const now = Date.now();
    const check = (file: string, minDays: number, maxDays: number): void => {
      const der = pemBlocks(readFileSync(file, 'utf8'))[0] as Buffer;
      const c = parseCertificate(der);
      assert.equal(new X509Certificate(der).publicKey.asymmetricKeyDetails?.modulusLength, 2048, file);
      assert.equal(c.signatureAlgorithm, SHA256_RSA, file);
      const life = (c.notAfter.getTime() - now) / DAY;
      assert.ok(life > minDays && life <= maxDays, `${file}: ${life} days`);
    };
    check(pki.files.caCert, 3649, 3651);
    check(pki.files.hostCert, 364, 366);
    check(pki.files.userCert, 364, 366);
    check(pki.files.userProxy, 6.9, 7.01);
  });

  it('gives the host certificate the SANs localhost and 127.0.0.1', async () => {
    const out = await openssl('x509', '-in', pki.files.hostCert, '-noout', '-ext', 'subjectAltName,extendedKeyUsage');
    assert.match(out, /DNS:localhost/);
    assert.match(out, /IP Address:127\.0\.0\.1/);
    assert.match(out, /TLS Web Server Authentication/);
  });

  it('writes the proxy file as arcproxy does: proxy cert, its key, the user cert', () => {
    const text = readFileSync(pki.files.userProxy, 'utf8');
    const kinds = [...text.matchAll(/-----BEGIN ([A-Z ]+)-----/g)].map((m) => m[1]);
    assert.deepEqual(kinds, ['CERTIFICATE', 'RSA PRIVATE KEY', 'CERTIFICATE']);
    const [proxyDer, userDer] = proxyChain(pki.files.userProxy) as [Buffer, Buffer];
    assert.deepEqual(userDer, pemBlocks(readFileSync(pki.files.userCert, 'utf8'))[0]);
    // The key in the file is the proxy's key.
    const pub = createPublicKey(createPrivateKey(text)).export({ type: 'spki', format: 'der' });
    const proxy = parseCertificate(proxyDer);
    assert.ok(pub.equals(Buffer.from(proxy.spkiDer)));
    // Subject = user subject + CN=<serial number in decimal>.
    assert.equal(proxy.subjectOneline, `${pki.userDn}/CN=${BigInt(`0x${proxy.serialHex}`).toString(10)}`);
    assert.equal(parseName(proxy.subjectDer).length, parseName(parseCertificate(userDer).subjectDer).length + 1);
    const pci = proxy.extensions.get(OID_PROXY_CERT_INFO);
    assert.equal(pci?.critical, true);
    assert.equal(proxy.proxyCertInfo?.policyLanguage, PROXY_POLICY.inheritAll);
    assert.equal(proxy.basicConstraints, undefined);
  });

  it('is accepted by openssl verify (CA file, hashed CA directory, partial chain)', async () => {
    assert.match(
      await openssl('verify', '-CAfile', pki.files.caCert, pki.files.hostCert, pki.files.userCert),
      /hostcert\.pem: OK[\s\S]*usercert\.pem: OK/,
    );
    assert.match(
      await openssl(
        'verify',
        '-CAfile',
        pki.files.caCert,
        '-untrusted',
        pki.files.userCert,
        '-allow_proxy_certs',
        pki.files.userProxy,
      ),
      /userproxy\.pem: OK/,
    );
    assert.match(
      await openssl(
        'verify',
        '-CApath',
        pki.files.certificatesDir,
        '-untrusted',
        pki.files.userCert,
        '-allow_proxy_certs',
        pki.files.userProxy,
      ),
      /userproxy\.pem: OK/,
    );
    assert.match(
      await openssl(
        'verify',
        '-CAfile',
        pki.files.userCert,
        '-partial_chain',
        '-allow_proxy_certs',
        pki.files.userProxy,
      ),
      /userproxy\.pem: OK/,
    );
  });

  it('is accepted by our own verifier with the certificates directory as trust store', () => {
    const trust = loadTrustStore(pki.files.certificatesDir);
    const r = verifyClientChain(proxyChain(pki.files.userProxy), trust);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(r.identity.dn, pki.userDn);
    assert.equal(r.identity.isProxy, true);
    assert.equal(r.identity.issuerDn, pki.caDn);
  });

  it('refuses to overwrite an existing PKI unless forced', async () => {
    await assert.rejects(
      initDevPki(pki.dir),
      (e: unknown) => e instanceof PkiError && /already holds a PKI/.test(e.message),
    );
    const again = await initDevPki(pki.dir, { force: true });
    assert.notEqual(again.caDn, pki.caDn, 'a forced init makes a new CA');
    assert.ok(
      !readdirSync(join(pki.dir, '..')).some((n) => n.includes('.old-') || n.includes('.tmp-')),
      'no leftovers',
    );
    pki = again;
  });

  it('refuses a non-empty directory that is not a PKI and leaves it alone', async () => {
    const d = fresh();
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'notes.txt'), 'mine');
    await assert.rejects(initDevPki(d), (e: unknown) => e instanceof PkiError && /not empty/.test(e.message));
    assert.deepEqual(readdirSync(d), ['notes.txt']);
  });

  it('adds the configured host name to the host certificate', async () => {
    const p = await initDevPki(fresh(), { hostname: 'ce.example.org' });
    const out = await openssl('x509', '-in', p.files.hostCert, '-noout', '-ext', 'subjectAltName');
    assert.match(out, /DNS:localhost, DNS:ce\.example\.org, IP Address:127\.0\.0\.1/);
  });
});

describe('ensureDevPki', () => {
  // One PKI goes through creation, reuse, host name changes and renewals in turn.
  const shared = fresh();
  let first: DevPki;

  it('creates the PKI once and then reuses it unchanged', async () => {
    first = await ensureDevPki(shared);
    assert.ok(first.written.length > 0);
    const before = readFileSync(first.files.userProxy);
    const second = await ensureDevPki(shared);
    assert.deepEqual(second.written, []);
    assert.equal(second.caDn, first.caDn);
    assert.ok(readFileSync(second.files.userProxy).equals(before));
  });

  it('reissues the host certificate when the configured host name changes', async () => {
    const r = await ensureDevPki(shared, { hostname: '10.1.2.3' });
    assert.deepEqual([...r.written].sort(), [r.files.hostCert, r.files.hostKey].sort());
    assert.match(
      await openssl('x509', '-in', r.files.hostCert, '-noout', '-ext', 'subjectAltName'),
      /DNS:localhost, IP Address:127\.0\.0\.1, IP Address:10\.1\.2\.3/,
    );
    assert.deepEqual((await ensureDevPki(shared, { hostname: '10.1.2.3' })).written, []);
    assert.equal(r.caDn, first.caDn);
  });

  it('renews an expiring proxy, and expiring host and user certificates, under the same CA', async () => {
    const caBefore = readFileSync(first.files.caCert);
    const hostBefore = readFileSync(first.files.hostCert);

    const inSixDays = new Date(Date.now() + 6.5 * DAY);
    const r1 = await ensureDevPki(shared, { now: inSixDays, hostname: '10.1.2.3' });
    assert.deepEqual(r1.written, [r1.files.userProxy]);
    assert.ok(readFileSync(r1.files.hostCert).equals(hostBefore));

    const late = new Date(Date.now() + 350 * DAY);
    const r2 = await ensureDevPki(shared, { now: late, hostname: '10.1.2.3' });
    assert.deepEqual(
      [...r2.written].sort(),
      [r2.files.hostCert, r2.files.hostKey, r2.files.userCert, r2.files.userProxy].sort(),
    );
    assert.ok(readFileSync(r2.files.caCert).equals(caBefore), 'the CA stays');
    const trust = loadTrustStore(r2.files.certificatesDir);
    const r = verifyClientChain(proxyChain(r2.files.userProxy), trust, new Date(late.getTime() + 60_000));
    assert.ok(r.ok, r.ok ? '' : r.reason);
    assert.equal(r.identity.dn, first.userDn, 'the user keeps the DN');
  });

  it('moves a broken directory aside and builds a complete PKI', async () => {
    writeFileSync(first.files.hostCert, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const again = await ensureDevPki(shared);
    assert.notEqual(again.caDn, first.caDn);
    const siblings = readdirSync(join(shared, '..'));
    assert.ok(
      siblings.some((n) => n.startsWith('pki.broken-')),
      siblings.join(','),
    );
    const trust = loadTrustStore(again.files.certificatesDir);
    assert.ok(verifyClientChain(proxyChain(again.files.userProxy), trust).ok);
  });

  it('replaces a half-written directory and old temporary build directories, not young ones', async () => {
    const d = fresh();
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'ca.pem'), 'half written');
    mkdirSync(`${d}.tmp-deadbeef`, { recursive: true });
    writeFileSync(join(`${d}.tmp-deadbeef`, 'ca.pem'), 'partial');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(`${d}.tmp-deadbeef`, hourAgo, hourAgo);
    mkdirSync(`${d}.tmp-0000beef`); // may be another process building right now
    const p = await ensureDevPki(d);
    assert.ok(existsSync(p.files.userProxy) && existsSync(p.files.caHashCert));
    assert.ok(!existsSync(`${d}.tmp-deadbeef`));
    assert.ok(existsSync(`${d}.tmp-0000beef`));
    assert.ok(readdirSync(join(d, '..')).some((n) => n.startsWith('pki.broken-')));
  });

  it('two concurrent first starts end up with the same complete PKI', async () => {
    const d = fresh();
    const [a, b] = await Promise.all([ensureDevPki(d), ensureDevPki(d)]);
    assert.equal(a.caDn, b.caDn);
    const trust = loadTrustStore(a.files.certificatesDir);
    assert.ok(verifyClientChain(proxyChain(a.files.userProxy), trust).ok);
    assert.deepEqual(
      readdirSync(join(d, '..')).filter((n) => n !== 'pki'),
      [],
    );
  });
});

describe('addDevUser', () => {
  let pki: DevPki;
  before(async () => {
    pki = await initDevPki(fresh());
  });

  it('writes NAME-cert.pem, NAME-key.pem and NAME-proxy.pem for a new identity', async () => {
    const u = await addDevUser(pki.dir, 'alice');
    assert.deepEqual(
      u.written.map((f) => f.slice(pki.dir.length + 1)),
      ['alice-cert.pem', 'alice-key.pem', 'alice-proxy.pem'],
    );
    assert.equal(mode(u.keyFile), 0o600);
    assert.equal(mode(u.proxyFile), 0o600);
    assert.equal(u.dn, pki.userDn.replace(/CN=[^/]*$/, 'CN=alice'));
    const trust = loadTrustStore(pki.files.certificatesDir);
    const viaProxy = verifyClientChain(proxyChain(u.proxyFile), trust);
    assert.ok(viaProxy.ok && viaProxy.identity.dn === u.dn);
    const viaCert = verifyClientChain(pemBlocks(readFileSync(u.certFile, 'utf8')), trust);
    assert.ok(viaCert.ok && viaCert.identity.dn === u.dn && !viaCert.identity.isProxy);
    assert.match(
      await openssl('verify', '-CAfile', pki.files.caCert, '-untrusted', u.certFile, '-allow_proxy_certs', u.proxyFile),
      /OK/,
    );
  });

  it('refuses an existing user unless forced, bad names, and a directory without a PKI', async () => {
    await addDevUser(pki.dir, 'bob');
    await assert.rejects(addDevUser(pki.dir, 'bob'), /already exists/);
    await addDevUser(pki.dir, 'bob', { force: true });
    for (const bad of ['', '../evil', 'a b', '-x', 'x'.repeat(65)]) {
      await assert.rejects(addDevUser(pki.dir, bad), (e: unknown) => e instanceof PkiError, bad);
    }
    await assert.rejects(
      addDevUser(fresh(), 'carol'),
      (e: unknown) => e instanceof PkiError && /missing or unreadable/.test(e.message),
    );
  });
});
