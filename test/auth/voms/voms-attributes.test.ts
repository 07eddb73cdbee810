/**
 * VOMS attributes of a connection's identity, through authenticateChain with real VOMS
 * proxies made by voms-proxy-fake: what verifies lands in `identity.voms`, every other
 * case leaves the client authenticated without attributes and logs why.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VerifiedChainCache } from '../../../src/auth/chain-cache.js';
import type { X509Identity } from '../../../src/auth/identity.js';
import { type VomsVerifier } from '../../../src/auth/voms/voms-verifier.js';
import { caDirEntry } from '../../../src/pki/ca-dir.js';
import { encodeTlv } from '../../../src/pki/der.js';
import { makeCrl } from '../../helpers/pki.js';
import { loadTrustStore, type TrustStore } from '../../../src/pki/trust-store.js';
import {
  acExtension,
  fakeProxy,
  flipIn,
  proxyWithAc,
  vomsSkip,
  vomsWorld,
  type Cred,
  VomsCheck,
  type Proxy,
  type VomsWorld,
} from './voms-fixture.js';

const HOST = 'voms.example.org';
const FQANS = [
  '/atlas/Role=NULL/Capability=NULL',
  '/atlas/prod/Role=production/Capability=NULL',
  '/atlas/lcg1/Role=NULL/Capability=NULL',
];
const HOUR = 3600 * 1000;

describe('VOMS attributes of a proxy chain', { skip: vomsSkip }, () => {
  let dir: string;
  let w: VomsWorld;
  let trust: TrustStore;
  let alice: Cred;
  let bob: Cred;
  let server: Cred;
  let good: Proxy;
  let check: VomsCheck;
  const lscLines = (s: Cred): string[] => [s.dn, w.ca.dn];
  const verifier = (): VomsVerifier => check.verifier();
  const auth = (p: Proxy, v?: VomsVerifier, now?: number, cache?: VerifiedChainCache): X509Identity =>
    check.auth(p, v, now, cache);
  const ignored = (p: Proxy, why: RegExp, now?: number): void => void check.ignored(p, why, now);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-voms-'));
    w = await vomsWorld(dir);
    trust = loadTrustStore(w.caDir);
    check = new VomsCheck(w, trust);
    [alice, bob, server] = await Promise.all([w.user('Alice'), w.user('Bob'), w.server(HOST)]);
    w.writeLsc('atlas', HOST, lscLines(server));
    good = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server, host: HOST });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the VO, the FQANs in order, the server and the AC end of a valid AC with group and role FQANs', () => {
    const id = auth(good);
    assert.equal(id.dn, alice.dn);
    assert.ok(id.voms);
    assert.equal(id.voms.vo, 'atlas');
    assert.deepEqual(id.voms.fqans, FQANS);
    assert.equal(id.voms.serverDn, server.dn);
    assert.ok(
      id.voms.notAfter.getTime() > Date.now() + 11 * HOUR &&
        id.voms.notAfter.getTime() <= Date.now() + 12 * HOUR + 60_000,
    );
  });

  it('accepts the older AC encoding that names the holder by its subject (serial still checked)', async () => {
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: ['/atlas'], server, host: HOST, oldFormat: true });
    assert.deepEqual(auth(p).voms?.fqans, ['/atlas']);
  });

  it('ignores an AC whose server the LSC file does not name (wrong subject DN)', () => {
    w.writeLsc('atlas', HOST, [`${w.ca.dn.replace(/CN=Test CA$/, '')}CN=other.example.org`, w.ca.dn]);
    try {
      ignored(good, /is not the one atlas\/voms\.example\.org\.lsc names/);
    } finally {
      w.writeLsc('atlas', HOST, lscLines(server));
    }
  });

  it('ignores an AC whose LSC names the right server under the wrong issuer', () => {
    w.writeLsc('atlas', HOST, [server.dn, '/DC=org/DC=elsewhere/CN=Other CA']);
    try {
      ignored(good, /is not the one/);
    } finally {
      w.writeLsc('atlas', HOST, lscLines(server));
    }
  });

  it('ignores an AC of a VO without an LSC file for its server', async () => {
    const p = await fakeProxy(w, alice, { vo: 'cms', fqans: ['/cms'], server, host: HOST });
    ignored(p, /no cms\/voms\.example\.org\.lsc in the VOMS directory/);
  });

  it('ignores an AC with a control character in an FQAN (FQANs go into listings and one-line accounting fields)', async () => {
    const p = await fakeProxy(w, alice, {
      vo: 'atlas',
      fqans: ['/atlas/prod\nSite: FORGED/Role=NULL/Capability=NULL'],
      server,
      host: HOST,
    });
    ignored(p, /control character/);
  });

  it('ignores an expired AC (the proxy is still valid)', async () => {
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server, host: HOST, pastac: '2:00', vomslife: 1 });
    ignored(p, /expired at/);
  });

  it('ignores an AC that is not yet valid, and does not keep that outcome in the cache', async () => {
    // Proxy from three hours ago, AC from now: an hour ago the proxy was valid, the AC not.
    const p = await fakeProxy(w, alice, {
      vo: 'atlas',
      fqans: FQANS,
      server,
      host: HOST,
      pastproxy: '3:00',
      hours: 12,
    });
    ignored(p, /is not valid before/, Date.now() - HOUR);
    const cache = new VerifiedChainCache();
    const v = verifier();
    assert.equal(auth(p, v, Date.now() - HOUR, cache).voms, undefined);
    assert.equal(cache.size, 0);
    assert.deepEqual(auth(p, v, Date.now(), cache).voms?.fqans, FQANS);
  });

  it('accepts an AC that starts within the clock-skew allowance', async () => {
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server, host: HOST, pastproxy: '1:00' });
    assert.deepEqual(auth(p, verifier(), Date.now() - 2 * 60_000).voms?.fqans, FQANS);
  });

  it("ignores an AC copied from another user's proxy", async () => {
    const bobs = await fakeProxy(w, bob, { vo: 'atlas', fqans: FQANS, server, host: HOST });
    const stolen = await proxyWithAc(alice, acExtension(bobs));
    const id = auth(stolen);
    assert.equal(id.dn, alice.dn);
    assert.equal(id.voms, undefined);
    ignored(stolen, /was issued to another certificate .* not to .*CN=Alice/);
    // The same AC in Bob's own (re-made) proxy verifies: the refusal is the holder's.
    assert.deepEqual(auth(await proxyWithAc(bob, acExtension(bobs))).voms?.fqans, FQANS);
  });

  it('ignores an AC whose signed content was changed (a byte of a role flipped)', async () => {
    const tampered = await proxyWithAc(alice, flipIn(acExtension(good), 'production'));
    ignored(tampered, /signature of the attribute certificate .* does not verify/);
  });

  it('ignores an AC whose signature bytes were changed', async () => {
    const ext = Buffer.from(acExtension(good));
    // The AC's signature is the last BIT STRING before the outer end: flip its last byte.
    const sigEnd = ext.length - 1;
    ext[sigEnd] = (ext[sigEnd] as number) ^ 0xff;
    ignored(await proxyWithAc(alice, ext), /does not verify/);
  });

  it('ignores an AC signed by a VOMS server whose certificate is not from a trusted CA', async () => {
    const rogueCa = await w.untrustedCa();
    const rogue = await w.server('voms.rogue.org', rogueCa);
    w.writeLsc('atlas', 'voms.rogue.org', [rogue.dn, rogueCa.dn]);
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server: rogue, host: 'voms.rogue.org' });
    ignored(p, /VOMS server certificate .*voms\.rogue\.org is not trusted/);
  });

  it('follows an LSC of three lines up a chain through an intermediate CA, and refuses one whose third line is wrong', async () => {
    const inter = await w.intermediateCa();
    const interTrust = loadTrustStore(w.caDir);
    const deep = await w.server('voms.deep.org', inter);
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server: deep, host: 'voms.deep.org' });
    const withLsc = (lines: string[]): X509Identity => {
      w.writeLsc('atlas', 'voms.deep.org', lines);
      return check.auth(p, verifier(), Date.now(), undefined, interTrust);
    };
    assert.deepEqual(withLsc([deep.dn, inter.dn, w.ca.dn]).voms?.fqans, FQANS);
    assert.deepEqual(withLsc([deep.dn, inter.dn]).voms?.fqans, FQANS);
    assert.equal(withLsc([deep.dn, inter.dn, inter.dn]).voms, undefined);
    assert.equal(withLsc([deep.dn, w.ca.dn]).voms, undefined);
  });

  it('ignores an AC whose VOMS server certificate is revoked by its CA', async () => {
    const revokedServer = await w.server(HOST);
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server: revokedServer, host: HOST });
    w.writeLsc('atlas', HOST, lscLines(revokedServer));
    try {
      assert.deepEqual(auth(p).voms?.fqans, FQANS, 'accepted before the CRL');
      const caDir = join(dir, 'certificates-with-crl');
      cpSync(w.caDir, caDir, { recursive: true });
      const crl = await makeCrl({ ...w.ca, pem: '', keyPem: '' }, [{ ...revokedServer, pem: '', keyPem: '' }]);
      writeFileSync(join(caDir, `${caDirEntry(w.ca.der).hash}.r0`), crl);
      const withCrl = loadTrustStore(caDir);
      check.takeReasons();
      // check.auth asserts that the user (not revoked) is still authenticated.
      assert.equal(check.auth(p, verifier(), Date.now(), undefined, withCrl).voms, undefined);
      assert.match(String(check.takeReasons()[0]), /is not trusted: .*was revoked/);
    } finally {
      w.writeLsc('atlas', HOST, lscLines(server));
    }
  });

  it('ignores an undecodable VOMS extension without refusing the client', async () => {
    ignored(await proxyWithAc(alice, encodeTlv(0x30, encodeTlv(0x02, Buffer.from([1])))), /cannot be decoded/);
  });

  it('gives no attributes and logs nothing for a proxy without an AC, or for a plain certificate', async () => {
    check.logs.length = 0;
    assert.equal(auth(await proxyWithAc(alice, undefined)).voms, undefined);
    assert.equal(auth({ pem: '', ders: [good.ders[1] as Buffer] }).voms, undefined);
    assert.deepEqual(
      check.logs.filter((l) => l.msg.includes('ignored')),
      [],
    );
  });

  it('gives no attributes while the VOMS directory does not exist, and sees it once created', async () => {
    const missing = join(dir, 'vomsdir-later');
    check.logs.length = 0;
    const v = check.verifier(missing);
    assert.ok(check.logs.some((l) => l.msg.startsWith('VOMS directory absent')));
    assert.equal(auth(good, v).voms, undefined);
    mkdirSync(join(missing, 'atlas'), { recursive: true });
    writeFileSync(join(missing, 'atlas', `${HOST}.lsc`), `${lscLines(server).join('\n')}\n`);
    assert.deepEqual(auth(good, v).voms?.fqans, FQANS);
  });

  it('follows the VOMS directory while running: an LSC added or removed applies to the next authentication, cache included', () => {
    const cache = new VerifiedChainCache();
    const v = verifier();
    w.removeLsc('atlas', HOST);
    try {
      assert.equal(auth(good, v, Date.now(), cache).voms, undefined);
      assert.equal(cache.size, 1);
      w.writeLsc('atlas', HOST, lscLines(server));
      assert.deepEqual(auth(good, v, Date.now(), cache).voms?.fqans, FQANS);
      w.removeLsc('atlas', HOST);
      assert.equal(auth(good, v, Date.now(), cache).voms, undefined);
    } finally {
      w.writeLsc('atlas', HOST, lscLines(server));
    }
  });

  it("keeps a cached identity's attributes no longer than the AC's notAfter", async () => {
    const p = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server, host: HOST, vomslife: 1, hours: 12 });
    const cache = new VerifiedChainCache();
    const v = verifier();
    assert.deepEqual(auth(p, v, Date.now(), cache).voms?.fqans, FQANS);
    const later = Date.now() + 90 * 60_000;
    const again = auth(p, v, later, cache);
    assert.equal(again.voms, undefined, 'the AC expired after an hour; the proxy has eleven more');
    assert.equal(again.dn, alice.dn);
  });
});
