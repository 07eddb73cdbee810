// Delegations end to end over real TLS against `ceres serve`: the caller is the dev
// PKI user authenticated by its proxy chain, requests are signed with that proxy
// exactly as arcproxy/pyarcrest sign them, jobs name delegations, and an
// acknowledged delegation survives kill -9 of the service.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { createProxyCertificate, signProxyFromCsr } from '../../src/pki/issue.js';
import { pemBlocks, toPem } from '../../src/pki/certificate.js';
import { generateRsaKeyPair } from '../../src/pki/keys.js';
import { x509 } from '../../src/pki/x509-lib.js';
import { addDevUser } from '../../src/pki/dev-pki.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

/** The path to use with Client.req for a Location header (`/arex/rest/...` → `/rest/...`). */
const pathOf = (location: string): string => location.replace(/^\/arex/, '');

async function newRequest(c: Client, v: '1.0' | '1.1'): Promise<{ id: string; location: string; csr: string }> {
  const r = await c.req('POST', `/rest/${v}/delegations?action=new`, '', { accept: '' });
  assert.equal(r.status, 201, r.text);
  const location = String(r.headers.location);
  return { id: location.split('/').pop() as string, location, csr: r.text };
}

async function twoStep(
  c: Client,
  proxyFile: string,
  v: '1.0' | '1.1',
  query = '',
): Promise<{ id: string; chain: string }> {
  // The ARC client sends no Accept and an empty body for the first step.
  const r = await c.req('POST', `/rest/${v}/delegations?action=new${query}`, '', { accept: '' });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.headers['content-type'], 'application/x-pem-file');
  const location = String(r.headers.location);
  assert.match(location, new RegExp(`^/arex/rest/${v.replace('.', '\\.')}/delegations/[0-9a-f]{32}$`));
  const signed = await signProxyFromCsr(r.text, proxyFile, proxyFile);
  // No Content-Type, as the ARC client sends it.
  const p = await c.req('PUT', pathOf(location), signed.chainPem);
  assert.equal(p.status, 200, p.text);
  assert.equal(p.text, '');
  return { id: location.split('/').pop() as string, chain: signed.chainPem };
}

describe('delegations over TLS (ceres serve)', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let aliceProxy: string;
  let bobProxy: string;
  before(async () => {
    ceres = await startCeres();
    alice = Client.forUser(ceres);
    aliceProxy = readFileSync(join(ceres.pkiDir, 'userproxy.pem'), 'utf8');
    const b = await addDevUser(ceres.pkiDir, 'bob');
    bob = Client.forUser(ceres, 'bob-proxy.pem');
    bobProxy = readFileSync(b.proxyFile, 'utf8');
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('1.0: two steps as the ARC client does them; get returns the chain; listing without type', async () => {
    const { id, chain } = await twoStep(alice, aliceProxy, '1.0');
    const g = await alice.req('POST', `/rest/1.0/delegations/${id}?action=get`, '');
    assert.equal(g.status, 200);
    assert.deepEqual(pemBlocks(g.text), pemBlocks(chain));
    const l = await alice.req('GET', '/rest/1.0/delegations');
    assert.ok(
      (l.json().delegation as { id: string; type?: string }[]).some((d) => d.id === id && d.type === undefined),
    );
    const x = await alice.req('GET', '/rest/1.0/delegations', undefined, { accept: 'text/xml' });
    assert.match(x.text, new RegExp(`<delegation>\\s*<id>${id}</id>\\s*</delegation>`));
  });

  it('1.1: two steps with type=x509, renew (201 + CSR) and PUT again', async () => {
    const { id } = await twoStep(alice, aliceProxy, '1.1', '&type=x509');
    const l = await alice.req('GET', '/rest/1.1/delegations?type=x509');
    assert.ok((l.json().delegation as { id: string; type: string }[]).some((d) => d.id === id && d.type === 'x509'));
    const r = await alice.req('POST', `/rest/1.1/delegations/${id}?action=renew`, '');
    assert.equal(r.status, 201);
    assert.match(r.text, /^-----BEGIN CERTIFICATE REQUEST-----/);
    const signed = await signProxyFromCsr(r.text, aliceProxy, aliceProxy);
    assert.equal((await alice.req('PUT', `/rest/1.1/delegations/${id}`, signed.chainPem)).status, 200);
    const g = await alice.req('POST', `/rest/1.1/delegations/${id}?action=get`, '');
    assert.deepEqual(pemBlocks(g.text)[0], pemBlocks(signed.chainPem)[0]);
  });

  it("a PUT of the signed proxy alone is completed with the caller's TLS chain (as A-REX does), 1.0 and 1.1", async () => {
    for (const v of ['1.0', '1.1'] as const) {
      const { id, location, csr } = await newRequest(alice, v);
      const signed = await signProxyFromCsr(csr, aliceProxy, aliceProxy);
      const p = await alice.req('PUT', pathOf(location), signed.certPem);
      assert.equal(p.status, 200, p.text);
      const g = await alice.req('POST', `/rest/${v}/delegations/${id}?action=get`, '');
      assert.equal(g.status, 200);
      // The stored credential: the proxy, then exactly the chain the caller presented.
      assert.deepEqual(pemBlocks(g.text), [...pemBlocks(signed.certPem), ...pemBlocks(aliceProxy)]);
    }
  });

  it("a lone proxy not issued by the caller's own certificate, for another key, or garbage: 400 with the reason", async () => {
    const { location, csr } = await newRequest(alice, '1.1');
    const put = (body: string) => alice.req('PUT', pathOf(location), body);
    // Signed by another user's proxy: not the caller's certificate.
    const byBob = await signProxyFromCsr(csr, bobProxy, bobProxy);
    let r = await put(byBob.certPem);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /issued by .*CN=bob.*, not by the certificate this connection authenticated with/i);
    // Signed by the caller's user certificate, while the connection used a proxy of it.
    const userCert = readFileSync(join(ceres.pkiDir, 'usercert.pem'), 'utf8');
    const byUser = await signProxyFromCsr(csr, userCert, readFileSync(join(ceres.pkiDir, 'userkey.pem'), 'utf8'));
    r = await put(byUser.certPem);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /not by the certificate this connection authenticated with/);
    // The caller's proxy named as issuer, but signed with another key.
    const [aliceLeaf] = pemBlocks(aliceProxy) as [Buffer];
    const stranger = await generateRsaKeyPair();
    const csrKey = Buffer.from(new x509.Pkcs10CertificateRequest(csr).publicKey.rawData);
    const forged = toPem(await createProxyCertificate(aliceLeaf, stranger.privateKey, csrKey));
    r = await put(forged);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /not signed by the key of the certificate this connection authenticated with/);
    // Right signer, wrong key: another request's key.
    const other = await newRequest(alice, '1.1');
    r = await put((await signProxyFromCsr(other.csr, aliceProxy, aliceProxy)).certPem);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /certifies another public key/);
    for (const garbage of ['garbage', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', '']) {
      r = await put(garbage);
      assert.equal(r.status, 400, `${JSON.stringify(garbage)}: ${r.text}`);
    }
    // None of these stored anything; the right lone proxy still completes the request.
    assert.equal((await alice.req('POST', `${pathOf(location)}?action=get`, '')).status, 409);
    assert.equal((await put((await signProxyFromCsr(csr, aliceProxy, aliceProxy)).certPem)).status, 200);
  });

  it('1.1: JWT delegation with X-Delegation (201 + Location), get as application/jwt, renew (200), delete (202)', async () => {
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const token = (sub: string): string => `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64({ sub, exp })}.c2lnbmF0dXJl`;
    const r = await alice.req('POST', '/rest/1.1/delegations?action=new&type=jwt', '', {
      'x-delegation': `bearer ${token('one')}`,
    });
    assert.equal(r.status, 201, r.text);
    const id = String(r.headers.location).split('/').pop() as string;
    let g = await alice.req('POST', `/rest/1.1/delegations/${id}?action=get`, '');
    assert.equal(g.headers['content-type'], 'application/jwt');
    assert.equal(g.text, token('one'));
    const rn = await alice.req('POST', `/rest/1.1/delegations/${id}?action=renew`, '', {
      'x-token-delegation': `Bearer ${token('two')}`,
    });
    assert.equal(rn.status, 200, rn.text);
    g = await alice.req('POST', `/rest/1.1/delegations/${id}?action=get`, '');
    assert.equal(g.text, token('two'));
    const l10 = await alice.req('GET', '/rest/1.0/delegations');
    assert.ok(!(l10.json().delegation as { id: string }[]).some((d) => d.id === id), '1.0 lists no tokens');
    assert.equal((await alice.req('POST', `/rest/1.1/delegations/${id}?action=delete`, '')).status, 202);
    assert.equal((await alice.req('POST', `/rest/1.1/delegations/${id}?action=get`, '')).status, 404);
  });

  it("another user's delegation: 404 on every action, and refused per item when a job names it", async () => {
    const { id: bobs } = await twoStep(bob, bobProxy, '1.1');
    for (const a of ['get', 'renew', 'delete'])
      assert.equal((await alice.req('POST', `/rest/1.1/delegations/${bobs}?action=${a}`, '')).status, 404, a);
    assert.equal((await alice.req('PUT', `/rest/1.1/delegations/${bobs}`, 'x')).status, 404);

    // In the description (xRSL delegationid), and as the 1.1 delegation_id default.
    const [inDesc] = await alice.submit(`&(executable="/bin/true")(delegationid="${bobs}")`);
    assert.equal(inDesc['status-code'], '404');
    assert.equal(inDesc.id, undefined);
    const r = await alice.req('POST', `/rest/1.1/jobs?action=new&delegation_id=${bobs}`, '&(executable="/bin/true")');
    assert.equal(r.status, 201);
    assert.equal(r.json().job[0]['status-code'], '404');

    // Bob's own job may use it; a batch mixing both is judged per item.
    const [own] = await bob.submit(`&(executable="/bin/true")(delegationid="${bobs}")`);
    assert.equal(own['status-code'], '201');
    const { id: alices } = await twoStep(alice, aliceProxy, '1.1');
    const items = await alice.submit(
      `+(&(executable="/bin/true")(delegationid="${alices}"))(&(executable="/bin/true")(delegationid="${bobs}"))`,
    );
    assert.deepEqual(
      items.map((i) => i['status-code']),
      ['201', '404'],
    );
    const [d] = await alice.action('delegations', [items[0].id]);
    assert.equal(d['status-code'], '200');
    assert.deepEqual(
      [d.delegation_id].flat(),
      [alices],
      'one id renders as a string, several as an array (ARC 7 JSON rules)',
    );
    const [info] = await alice.action('info', [items[0].id]);
    assert.match(info.info_document.ComputingActivity.ProxyExpirationTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    await alice.waitFor([items[0].id], FINAL, 120_000);
    await bob.waitFor([own.id], FINAL, 120_000);
  });

  it('an acknowledged delegation survives kill -9; key material is 0600 in a 0700 directory', async () => {
    const { id, chain } = await twoStep(alice, aliceProxy, '1.1');
    await alice.close();
    await bob.close();
    await stopCeres(ceres, 'SIGKILL');
    ceres = await startCeres({ stateDir: ceres.stateDir });
    alice = Client.forUser(ceres);
    bob = Client.forUser(ceres, 'bob-proxy.pem');
    const g = await alice.req('POST', `/rest/1.1/delegations/${id}?action=get`, '');
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(pemBlocks(g.text), pemBlocks(chain));
    const l = await alice.req('GET', '/rest/1.1/delegations');
    assert.ok((l.json().delegation as { id: string }[]).some((d) => d.id === id));
    const dir = join(ceres.stateDir, 'delegations');
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const files = readdirSync(dir);
    assert.ok(files.some((n) => n.startsWith(id)));
    for (const n of files) assert.equal(statSync(join(dir, n)).mode & 0o777, 0o600, n);
  });
});
