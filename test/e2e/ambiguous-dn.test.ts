// Confusable subjects on the real service, made as an attacker would get them from a CA
// that lets users choose their subject text: a certificate whose one-line form is
// byte-equal to another user's (a value holding `/OU=...` where the victim has two RDNs,
// or `+UID=...` where the victim has a multi-valued RDN). Such a caller is refused with
// 401 and the reason, and never sees or touches the victim's jobs; a subject with a `/`
// that reads back unambiguously (`CN=host/name`) is served as its own user, and the
// owner shown to the victim stays the one-line form.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TAG, encodeOid, encodeTlv } from '../../src/pki/der.js';
import { DEV_PKI_FILES } from '../../src/pki/dev-pki.js';
import { encodeName, parseName, toOneline, type DnPart } from '../../src/pki/dn.js';
import { parseCertificate, pemBlocks, toPem } from '../../src/pki/certificate.js';
import { createEndEntityCertificate } from '../../src/pki/issue.js';
import { importSigningKeyPem, privateKeyToPem } from '../../src/pki/keys.js';
import type { CryptoKey } from '../../src/pki/x509-lib.js';
import { newKeys } from '../helpers/pki.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const OID_CN = '2.5.4.3';
const OID_UID = '0.9.2342.19200300.100.1.1';
const utf8Ava = (oid: string, v: string) =>
  encodeTlv(TAG.SEQUENCE, encodeOid(oid), encodeTlv(TAG.UTF8_STRING, Buffer.from(v)));

describe('confusable subjects', () => {
  let ceres: RunningCeres;
  let issuer: { certDer: Buffer; key: CryptoKey };
  let ns: { o: string; ou: string };
  const clients: Client[] = [];
  let alice: Client;
  let aliceDn: string;
  let aliceJob: string;

  /** A client with a certificate of the dev CA for the DER subject `subject` (no proxy). */
  async function clientFor(name: string, subject: Buffer): Promise<{ client: Client; oneline: string }> {
    const keys = await newKeys();
    const der = await createEndEntityCertificate({ dn: subject, publicKey: keys.publicKey, issuer, kind: 'user' });
    const file = join(ceres.stateDir, `${name}-cred.pem`);
    writeFileSync(file, toPem(der) + privateKeyToPem(keys.privateKey), { mode: 0o600 });
    const client = new Client(ceres.url, file, join(ceres.pkiDir, DEV_PKI_FILES.caCert));
    clients.push(client);
    return { client, oneline: toOneline(parseCertificate(der).subject) };
  }
  const parts = (...p: [string, string][]): DnPart[] => p.map(([type, value]) => ({ type, value }));

  before(async () => {
    ceres = await startCeres();
    const caPem = readFileSync(join(ceres.pkiDir, DEV_PKI_FILES.caCert), 'utf8');
    issuer = {
      certDer: Buffer.from(pemBlocks(caPem, 'CERTIFICATE')[0] as Uint8Array),
      key: await importSigningKeyPem(readFileSync(join(ceres.pkiDir, DEV_PKI_FILES.caKey), 'utf8')),
    };
    const user = parseCertificate(
      pemBlocks(readFileSync(join(ceres.pkiDir, DEV_PKI_FILES.userCert), 'utf8'), 'CERTIFICATE')[0] as Uint8Array,
    );
    aliceDn = toOneline(user.subject);
    const [, o, ou] = /^\/O=([^/]+)\/OU=([^/]+)\/CN=/.exec(aliceDn) ?? [];
    ns = { o: o as string, ou: ou as string };
    alice = Client.forUser(ceres);
    clients.push(alice);
    const [item] = await alice.submit('&(executable="/bin/sleep")(arguments="600")');
    aliceJob = item.id;
  });
  after(async () => {
    await alice.action('kill', [aliceJob]).catch(() => undefined);
    for (const c of clients) await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it("a value holding '/OU=' that prints as the victim's DN is refused with 401 and the reason", async () => {
    // O = "Ceres Development/OU=<ns>", CN = "Ceres Dev User": two RDNs where alice has three.
    const { client: mallory, oneline } = await clientFor(
      'mallory',
      encodeName(parts(['O', `${ns.o}/OU=${ns.ou}`], ['CN', 'Ceres Dev User'])),
    );
    assert.equal(oneline, aliceDn, 'the attack needs a byte-equal one-line form');
    const list = await mallory.req('GET', '/rest/1.1/jobs');
    assert.equal(list.status, 401, list.text);
    assert.match(list.text, /ambiguous/);
    const kill = await mallory.req('POST', '/rest/1.1/jobs?action=kill', JSON.stringify({ job: [{ id: aliceJob }] }), {
      'content-type': 'application/json',
    });
    assert.equal(kill.status, 401, kill.text);
    const info = await mallory.req('GET', `/rest/1.1/jobs/${aliceJob}/session`);
    assert.equal(info.status, 401);
    assert.notEqual((await alice.status([aliceJob])).get(aliceJob), 'KILLED');
    assert.equal((await alice.req('GET', '/rest/1.1/jobs')).json().job.length, 1);
  });

  it("a value holding '+UID=' that prints as a multi-valued RDN is refused; the multi-valued holder is served", async () => {
    const base = parts(['O', ns.o], ['OU', ns.ou]).map((p) => encodeName([p]).subarray(2));
    const multi = encodeTlv(
      TAG.SEQUENCE,
      ...base,
      encodeTlv(TAG.SET, utf8Ava(OID_CN, 'carol'), utf8Ava(OID_UID, 'c1')),
    );
    const single = encodeTlv(TAG.SEQUENCE, ...base, encodeTlv(TAG.SET, utf8Ava(OID_CN, 'carol+UID=c1')));
    assert.equal(parseName(multi).length, 3);
    const { client: carol, oneline: carolDn } = await clientFor('carol', multi);
    const { client: mallory, oneline } = await clientFor('mallory2', single);
    assert.equal(oneline, carolDn);
    const [item] = await carol.submit('&(executable="/bin/true")');
    const mine = await carol.req('GET', '/rest/1.1/jobs');
    assert.deepEqual(
      (mine.json().job as { id: string }[]).map((j) => j.id),
      [item.id],
    );
    const r = await mallory.req('GET', '/rest/1.1/jobs');
    assert.equal(r.status, 401, r.text);
    assert.match(r.text, /ambiguous/);
  });

  it("a '/' not followed by attr= is fine: that user is served and sees only its own jobs", async () => {
    const { client: host } = await clientFor(
      'host',
      encodeName(parts(['O', ns.o], ['OU', ns.ou], ['CN', 'Ceres Dev User/host.example.org'])),
    );
    const r = await host.req('GET', '/rest/1.1/jobs');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json(), { job: [] });
    const [item] = await host.submit('&(executable="/bin/true")');
    assert.deepEqual(
      ((await host.req('GET', '/rest/1.1/jobs')).json().job as { id: string }[]).map((j) => j.id),
      [item.id],
    );
    assert.equal((await alice.req('GET', '/rest/1.1/jobs')).json().job.length, 1);
  });

  it('the owner shown to the owner is the one-line form, as before', async () => {
    const r = await alice.req('POST', '/rest/1.1/jobs?action=info', JSON.stringify({ job: [{ id: aliceJob }] }), {
      'content-type': 'application/json',
    });
    assert.ok(r.text.includes(JSON.stringify(aliceDn).slice(1, -1)), r.text);
  });
});
