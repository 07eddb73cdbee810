/**
 * Authentication against `ceres serve` itself (its own CA directory, default CRL
 * interval): a legacy GT2 proxy is accepted, and a CRL dropped into the CA directory
 * while the service runs refuses the revoked user on new connections within the
 * look-again interval (30 s), while other users of the same CA go on working.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { caDirEntry } from '../../src/pki/ca-dir.js';
import { parseCertificate, pemBlocks } from '../../src/pki/certificate.js';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { importSigningKeyPem } from '../../src/pki/keys.js';
import { makeCrl, makeProxy, proxyFileText, type TestCred } from '../helpers/pki.js';

/** A credential of the development PKI as the test helpers take it (signing only). */
async function devCred(pkiDir: string, cert: string, key: string): Promise<TestCred> {
  const pem = readFileSync(join(pkiDir, cert), 'utf8');
  const keyPem = readFileSync(join(pkiDir, key), 'utf8');
  const der = pemBlocks(pem)[0] as Buffer;
  const privateKey = await importSigningKeyPem(keyPem);
  return { der, pem, cert: parseCertificate(der), keys: { privateKey, publicKey: privateKey }, keyPem };
}

/** One request on a new connection (a kept-alive one keeps the identity it was opened with). */
async function statusOnNewConnection(c: RunningCeres, credentialFile: string): Promise<number> {
  const client = new Client(c.url, credentialFile, join(c.pkiDir, 'ca.pem'));
  try {
    return (await client.req('GET', '/rest/1.0/jobs')).status;
  } finally {
    await client.close();
  }
}

describe('authentication against ceres serve', () => {
  let ceres: RunningCeres;
  let user: TestCred;
  let gt2File: string;
  before(async () => {
    // CRLs looked at again every second (30 s by default), so the test waits seconds, not half a minute.
    ceres = await startCeres({ config: { tls: { crlRecheckSeconds: 1 } } });
    user = await devCred(ceres.pkiDir, 'usercert.pem', 'userkey.pem');
    gt2File = join(ceres.stateDir, 'gt2-proxy.pem');
    writeFileSync(gt2File, proxyFileText(await makeProxy(user, { legacy: 'proxy' }), user), { mode: 0o600 });
  });
  after(async () => {
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('a legacy GT2 proxy is accepted, as the user it was made from', async () => {
    const client = new Client(ceres.url, gt2File, join(ceres.pkiDir, 'ca.pem'));
    try {
      const r = await client.req('GET', '/rest/1.0/jobs');
      assert.equal(r.status, 200, r.text);
    } finally {
      await client.close();
    }
  });

  it('a CRL placed in the CA directory while the service runs refuses the revoked user within the interval; others go on', async () => {
    const bob = await addDevUser(ceres.pkiDir, 'bob');
    assert.equal(await statusOnNewConnection(ceres, join(ceres.pkiDir, 'userproxy.pem')), 200);
    const ca = await devCred(ceres.pkiDir, 'ca.pem', 'cakey.pem');
    const crlFile = join(ceres.pkiDir, 'certificates', caDirEntry(ca.der).crlFile);
    writeFileSync(`${crlFile}.new`, await makeCrl(ca, [user]));
    renameSync(`${crlFile}.new`, crlFile);
    const started = Date.now();
    let status = 200;
    while (Date.now() - started < 30_000) {
      status = await statusOnNewConnection(ceres, join(ceres.pkiDir, 'userproxy.pem'));
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(status, 401, 'refused within 30 s (looked at again every second)');
    assert.equal(await statusOnNewConnection(ceres, gt2File), 401, 'every proxy of the revoked user');
    assert.equal(await statusOnNewConnection(ceres, bob.proxyFile), 200, 'another user of the same CA');
  });
});
