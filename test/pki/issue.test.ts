import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { x509 } from '../../src/pki/x509-lib.js';
import { signProxyFromCsr } from '../../src/pki/issue.js';
import { initDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { parseCertificate, pemBlocks } from '../../src/pki/certificate.js';
import { PROXY_POLICY } from '../../src/pki/proxy-cert-info.js';
import { loadTrustStore } from '../../src/pki/trust-store.js';
import { verifyClientChain } from '../../src/auth/x509-chain.js';
import { hoursFromNow, makeCa, makeUser, newKeys, tempDir } from '../helpers/pki.js';

const run = promisify(execFile);
const dir = tempDir(after, 'ceres-issue-');
const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

async function csrPem(rsa = true): Promise<string> {
  const keys = await newKeys(rsa);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    keys,
    signingAlgorithm: rsa ? RSA : { name: 'ECDSA', hash: 'SHA-256' },
  });
  return csr.toString('pem');
}

describe('signProxyFromCsr', () => {
  let pki: DevPki;
  before(async () => {
    pki = await initDevPki(join(dir, 'pki'));
  });

  it('signs with a proxy file (cert, key, user cert) into a proxy-of-proxy chain that OpenSSL accepts', async () => {
    const proxyFile = readFileSync(pki.files.userProxy, 'utf8');
    const signed = await signProxyFromCsr(await csrPem(), proxyFile, proxyFile, { lifetimeSeconds: 3600 });
    const chain = pemBlocks(signed.chainPem);
    assert.equal(chain.length, 3, 'new proxy, signing proxy, user certificate');
    const signer = parseCertificate(pemBlocks(proxyFile)[0] as Buffer);
    assert.equal(signed.cert.subjectOneline, `${signer.subjectOneline}/CN=${BigInt(`0x${signed.cert.serialHex}`)}`);
    assert.ok(signer.subjectOneline.startsWith(`${pki.userDn}/CN=`));
    assert.equal(signed.cert.proxyCertInfo?.policyLanguage, PROXY_POLICY.inheritAll);
    const r = verifyClientChain(chain, loadTrustStore(pki.files.certificatesDir));
    assert.ok(r.ok && r.identity.dn === pki.userDn && r.identity.proxyDepth === 2, r.ok ? '' : r.reason);
    const f = join(dir, 'chain.pem');
    writeFileSync(f, signed.chainPem);
    const { stdout } = await run('openssl', [
      'verify',
      '-CAfile',
      pki.files.caCert,
      '-untrusted',
      f,
      '-allow_proxy_certs',
      f,
    ]);
    assert.match(stdout, /OK/);
  });

  it('signs with a user certificate and its PKCS#8 key: limited policy, path length, chosen serial, EC request', async () => {
    const signed = await signProxyFromCsr(
      await csrPem(false),
      readFileSync(pki.files.userCert, 'utf8'),
      readFileSync(pki.files.userKey, 'utf8'),
      { policy: 'limited', pathLen: 0, serial: 4711 },
    );
    assert.equal(signed.cert.subjectOneline, `${pki.userDn}/CN=4711`);
    assert.equal(signed.cert.proxyCertInfo?.policyLanguage, PROXY_POLICY.limited);
    assert.equal(signed.cert.proxyCertInfo?.pathLen, 0);
    const r = verifyClientChain(pemBlocks(signed.chainPem), loadTrustStore(pki.files.certificatesDir));
    assert.ok(r.ok && r.identity.limited);
  });

  it('never makes a proxy outlive its signer', async () => {
    const ca = await makeCa();
    const shortUser = await makeUser(ca, { notAfter: hoursFromNow(2) });
    const signed = await signProxyFromCsr(await csrPem(false), shortUser.pem, shortUser.keyPem, {
      lifetimeSeconds: 24 * 3600,
    });
    assert.equal(signed.cert.notAfter.getTime(), shortUser.cert.notAfter.getTime());
  });

  it('refuses a request whose signature does not verify, and credentials without a certificate', async () => {
    const good = await csrPem();
    const der = pemBlocks(good, 'CERTIFICATE REQUEST')[0] as Buffer;
    der[der.length - 5] = (der[der.length - 5] as number) ^ 0xff; // inside the signature
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    const user = readFileSync(pki.files.userCert, 'utf8');
    const key = readFileSync(pki.files.userKey, 'utf8');
    await assert.rejects(signProxyFromCsr(bad, user, key), /signature does not verify/);
    await assert.rejects(signProxyFromCsr(good, key, key), /no certificate/);
  });
});
