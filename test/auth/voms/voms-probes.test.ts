/**
 * VOMS probed as an attacker would, with real proxies made by voms-proxy-fake (and, where
 * the tool cannot write the case, a real AC changed and signed again by its VOMS server):
 * each probe is either used as the VOMS rules allow or ignored with a logged reason, the
 * caller staying authenticated as its DN. docs/security.md (VOMS attributes) has the
 * table of these probes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VerifiedChainCache } from '../../../src/auth/chain-cache.js';
import type { X509Identity } from '../../../src/auth/identity.js';
import { OID_AC_TARGETS } from '../../../src/auth/voms/attribute-certificate.js';
import { Groups } from '../../../src/authz/match-rules.js';
import { subjectOfIdentity } from '../../../src/authz/subject.js';
import { parseCertificate } from '../../../src/pki/certificate.js';
import { TAG, children, encodeTlv, parseDer, raw, type Tlv } from '../../../src/pki/der.js';
import { loadTrustStore } from '../../../src/pki/trust-store.js';
import {
  VomsCheck,
  acExtensionDer,
  acSequence,
  acsOf,
  fakeProxy,
  proxyWithAc,
  resignAc,
  vomsSkip,
  vomsWorld,
  type Cred,
  type FakeProxyOptions,
  type Proxy,
  type VomsWorld,
} from './voms-fixture.js';

const HOST = 'voms.example.org';
/** This service's host name, for ACs that name their targets. */
const SELF = 'ce.example.org';
const ATLAS = ['/atlas/Role=NULL/Capability=NULL', '/atlas/prod/Role=production/Capability=NULL'];
const CMS = ['/cms/Role=NULL/Capability=NULL'];
const HOUR = 3600 * 1000;

/** acinfo fields (RFC 5755 4.1): the holder and the extensions are the ones the probes change. */
const HOLDER = 1;
const ATTRIBUTES = 6;
const EXTENSIONS = 7;

describe('VOMS probed as an attacker would', { skip: vomsSkip }, () => {
  let dir: string;
  let w: VomsWorld;
  let check: VomsCheck;
  let alice: Cred;
  let bob: Cred;
  let server: Cred;
  let cmsServer: Cred;
  /** Alice's proxy with an AC of VO atlas that verifies: the base most probes change. */
  let good: Proxy;

  const proxy = (o: Partial<FakeProxyOptions> & { user?: Cred }): Promise<Proxy> =>
    fakeProxy(w, o.user ?? alice, { vo: 'atlas', fqans: ATLAS, server, host: HOST, ...o });
  const auth = (p: Proxy, now?: number, cache?: VerifiedChainCache): X509Identity =>
    check.auth(p, check.verifier(), now, cache);
  /** The groups of `rules` (each a group of one `voms` rule) the caller of `p` is in. */
  const groupsOf = (p: Proxy, rules: readonly string[]): string[] =>
    new Groups(
      { groups: rules.map((r) => ({ name: r, match: [{ voms: r }] })), allow: [] },
      { get: () => undefined as never },
    ).of(subjectOfIdentity(auth(p)));
  /** The AC of `p` with its extension list changed by `edit`, signed again by `signer`. */
  /** The AC of `p` with the items of its acinfo field `at` (a SEQUENCE) changed by `edit`, signed again by the server. */
  const withItems = (p: Proxy, at: number, edit: (items: Buffer[]) => Buffer[]): Buffer =>
    resignAc(acsOf(p)[0] as Uint8Array, server, (f) => {
      const items = children(parseDer(f[at] as Buffer)).map((t) => Buffer.from(raw(t)));
      return f.map((x, i) => (i === at ? encodeTlv(TAG.SEQUENCE, ...edit(items)) : x));
    });
  const withExtensions = (p: Proxy, edit: (exts: Buffer[]) => Buffer[]): Buffer => withItems(p, EXTENSIONS, edit);
  /** A target list naming `host`: VOMS's shape (each target a SEQUENCE around [0] GeneralName) or RFC 5755's. */
  const targets = (host: string, shape: 'voms' | 'rfc'): Buffer => {
    const name = encodeTlv(0xa0, encodeTlv(0x86, Buffer.from(host, 'latin1')));
    return encodeTlv(TAG.SEQUENCE, encodeTlv(TAG.SEQUENCE, shape === 'voms' ? encodeTlv(TAG.SEQUENCE, name) : name));
  };
  /** The extensions but the target list (its OID 2.5.29.55 encodes as 55 1d 37). */
  const withoutTargets = (exts: Buffer[]): Buffer[] => exts.filter((e) => !e.includes(Buffer.from([0x55, 0x1d, 0x37])));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-voms-probes-'));
    w = await vomsWorld(dir);
    check = new VomsCheck(w, loadTrustStore(w.caDir), [SELF]);
    [alice, bob, server, cmsServer] = await Promise.all([
      w.user('Alice'),
      w.user('Bob'),
      w.server(HOST),
      w.server('voms.cms.org'),
    ]);
    w.writeLsc('atlas', HOST, [server.dn, w.ca.dn]);
    w.writeLsc('atlasx', HOST, [server.dn, w.ca.dn]);
    w.writeLsc('cms', 'voms.cms.org', [cmsServer.dn, w.ca.dn]);
    good = await proxy({});
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('a server the LSC does not name', () => {
    it('a host certificate of the trusted CA signing ACs in the name of the real VOMS host: ignored', async () => {
      // Any grid host certificate can sign an AC: only the LSC file tells the VO's server from it.
      const rogue = await w.server('rogue.example.org');
      check.ignored(
        await proxy({ server: rogue }),
        /VOMS server .*CN=rogue\.example\.org .*is not the one atlas\/voms\.example\.org\.lsc names/,
      );
    });

    it('the same certificate naming itself as the VOMS host: ignored, no LSC file names it', async () => {
      const rogue = await w.server('rogue.example.org');
      check.ignored(await proxy({ server: rogue, host: 'rogue.example.org' }), /no atlas\/rogue\.example\.org\.lsc/);
    });

    it("an AC the user signed with their own certificate's key: ignored", async () => {
      check.ignored(
        await proxy({ server: alice }),
        /VOMS server .*CN=Alice .*is not the one atlas\/voms\.example\.org\.lsc names/,
      );
    });

    it("the real server of VO cms signing for VO atlas: ignored, atlas's LSC names another server", async () => {
      check.ignored(
        await proxy({ server: cmsServer, host: HOST }),
        /is not the one atlas\/voms\.example\.org\.lsc names/,
      );
    });
  });

  describe('FQANs and their VO', () => {
    it('an AC of VO atlas carrying a FQAN of VO cms: ignored', async () => {
      check.ignored(
        await proxy({ fqans: ['/atlas', '/cms/Role=production'] }),
        /FQAN \/cms\/Role=production is not under the VO \/atlas/,
      );
    });

    it('an AC of VO atlas carrying /atlasx (a prefix by characters only): ignored', async () => {
      check.ignored(
        await proxy({ fqans: ['/atlasx/Role=NULL/Capability=NULL'] }),
        /FQAN \/atlasx.* is not under the VO \/atlas/,
      );
    });

    it('a verified AC of VO atlasx is in no group of /atlas', async () => {
      const p = await proxy({ vo: 'atlasx', fqans: ['/atlasx/Role=NULL/Capability=NULL'] });
      assert.equal(auth(p).voms?.vo, 'atlasx', 'the AC itself verifies');
      assert.deepEqual(groupsOf(p, ['/atlas', '/atlasx']), ['/atlasx']);
    });

    it('Role=NULL grants no role: /atlas/Role=NULL is in the /atlas group, not in /atlas/Role=production', async () => {
      const p = await proxy({ fqans: ['/atlas/Role=NULL/Capability=NULL', '/atlas/prod/Role=NULL/Capability=NULL'] });
      assert.deepEqual(
        groupsOf(p, ['/atlas', '/atlas/prod', '/atlas/Role=production', '/atlas/prod/Role=production']),
        ['/atlas', '/atlas/prod'],
      );
    });

    it('a role spelt in another case, or a Role before a group, is no FQAN: it matches no rule', async () => {
      const p = await proxy({ fqans: ['/atlas/role=production', '/atlas/Role=production/prod'] });
      assert.deepEqual(auth(p).voms?.fqans, ['/atlas/role=production', '/atlas/Role=production/prod']);
      assert.deepEqual(groupsOf(p, ['/atlas/Role=production', '/atlas/prod']), []);
    });
    it('an AC with a second FQAN attribute (one more list, smuggling a role): ignored', async () => {
      const role = await proxy({ fqans: ['/atlas/Role=production'] });
      // The FQAN attribute of that AC: acinfo (its first part) > attributes > the first attribute.
      const acinfo = children(parseDer(acsOf(role)[0] as Uint8Array))[0] as Tlv;
      const smuggled = Buffer.from(raw(children(children(acinfo)[ATTRIBUTES] as Tlv)[0] as Tlv));
      const ac = withItems(good, ATTRIBUTES, (a) => [...a, smuggled]);
      check.ignored(await proxyWithAc(alice, acSequence(ac)), /carries 2 FQAN attributes, not one/);
    });
  });

  describe('proxies of proxies', () => {
    it('a plain proxy of a VOMS proxy (a delegated credential) keeps the attributes of the proxy below', async () => {
      const p = await proxyWithAc(good, undefined);
      assert.equal(p.ders.length, 3);
      assert.deepEqual(auth(p).voms?.fqans, ATLAS);
    });

    it('an AC in a proxy of a proxy, issued to the end-entity certificate, is used', async () => {
      const p = await proxyWithAc(await proxyWithAc(alice, undefined), acSequence(...acsOf(good)));
      assert.deepEqual(auth(p).voms?.fqans, ATLAS);
    });

    it('an AC whose holder is the proxy below (its issuer and serial), not the end-entity certificate: ignored', async () => {
      const middle = await proxyWithAc(alice, undefined);
      const m = parseCertificate(middle.ders[0] as Buffer);
      const holder = encodeTlv(
        TAG.SEQUENCE,
        encodeTlv(
          0xa0,
          encodeTlv(TAG.SEQUENCE, encodeTlv(0xa4, Buffer.from(m.issuerDer))),
          encodeTlv(TAG.INTEGER, Buffer.from(m.serialHex, 'hex')),
        ),
      );
      const ac = resignAc(acsOf(good)[0] as Uint8Array, server, (f) => f.map((x, i) => (i === HOLDER ? holder : x)));
      check.ignored(await proxyWithAc(middle, acSequence(ac)), /was issued to another certificate \(serial /);
    });

    it("Bob's AC in a proxy Alice made of her own VOMS proxy: ignored, and her AC below is not read in its place", async () => {
      const bobs = await proxy({ user: bob });
      check.logs.length = 0;
      const id = auth(await proxyWithAc(good, acSequence(...acsOf(bobs))));
      assert.equal(id.dn, alice.dn);
      assert.equal(id.voms, undefined);
      const reasons = check.takeReasons().join('\n');
      assert.match(reasons, /issued to another certificate/);
      assert.match(reasons, /proxy certificate 1 .*not read: the proxy above it carries its own/);
    });
  });

  describe('validity', () => {
    it('an AC that outlives its proxy: used while the proxy lives, never past its end', async () => {
      const p = await proxy({ hours: 1, vomslife: 12 });
      const cache = new VerifiedChainCache();
      const id = auth(p, Date.now(), cache);
      assert.deepEqual(id.voms?.fqans, ATLAS);
      assert.ok(id.voms.notAfter.getTime() <= id.notAfter.getTime(), 'the attributes end with the proxy');
      const r = check.verifier();
      const later = Date.now() + 2 * HOUR;
      assert.throws(() => check.auth(p, r, later, cache), /expired/);
    });
  });

  describe('several ACs in one proxy', () => {
    it('ACs of two VOs, both valid: the FQANs of both, the first VO primary', async () => {
      const p = await proxyWithAc(
        alice,
        acSequence(
          ...acsOf(good),
          ...acsOf(await proxy({ vo: 'cms', fqans: CMS, server: cmsServer, host: 'voms.cms.org' })),
        ),
      );
      const id = auth(p);
      assert.equal(id.voms?.vo, 'atlas');
      assert.deepEqual(id.voms?.fqans, [...ATLAS, ...CMS]);
      assert.deepEqual(groupsOf(p, ['/cms', '/atlas/Role=production']), ['/cms', '/atlas/Role=production']);
    });

    it('one AC valid, the other not yet: the valid one is used and the outcome is not cached, so the other counts once valid', async () => {
      const early = await proxy({ pastproxy: '3:00', pastac: '3:00' });
      const late = await proxy({ vo: 'cms', fqans: CMS, server: cmsServer, host: 'voms.cms.org', pastproxy: '3:00' });
      const p = await proxyWithAc(alice, acSequence(...acsOf(early), ...acsOf(late)), new Date(Date.now() - 3 * HOUR));
      const cache = new VerifiedChainCache();
      const v = check.verifier();
      assert.deepEqual(check.auth(p, v, Date.now() - HOUR, cache).voms?.fqans, ATLAS);
      assert.equal(cache.size, 0);
      assert.deepEqual(check.auth(p, v, Date.now(), cache).voms?.fqans, [...ATLAS, ...CMS]);
    });

    it("a bad AC (another holder's) before a good one: the good one is used, and the bad one's reason logged", async () => {
      const bobs = await proxy({ user: bob });
      const cms = await proxy({ vo: 'cms', fqans: CMS, server: cmsServer, host: 'voms.cms.org' });
      check.logs.length = 0;
      const id = auth(await proxyWithAc(alice, acSequence(...acsOf(bobs), ...acsOf(cms))));
      assert.equal(id.voms?.vo, 'cms');
      assert.deepEqual(id.voms?.fqans, CMS);
      assert.ok(
        check.takeReasons().some((r) => /VO atlas .*issued to another certificate/.test(r)),
        'the ignored AC is logged',
      );
    });

    it('more ACs than are read (each costs signature checks): the first 8 are checked, and the log says so', async () => {
      const [ac] = acsOf(good);
      check.logs.length = 0;
      const id = auth(await proxyWithAc(alice, acSequence(...Array<Uint8Array>(9).fill(ac as Uint8Array))));
      assert.deepEqual(id.voms?.fqans, ATLAS, 'the same AC repeated gives its FQANs once');
      assert.match(check.takeReasons().join('\n'), /only the first 8 of 9 attribute certificates are read/);
    });
  });

  describe('extensions of the AC', () => {
    it('a critical extension Ceres does not know: ignored', async () => {
      check.ignored(await proxy({ acExtension: '1.2.3.4/true' }), /unsupported critical extension 1\.2\.3\.4/);
    });

    it('the same extension, not critical: used', async () => {
      assert.deepEqual(auth(await proxy({ acExtension: '1.2.3.4' })).voms?.fqans, ATLAS);
    });

    it('a target restriction as voms-proxy-fake writes it (a list naming no service): ignored', async () => {
      check.ignored(await proxy({ target: 'other.example.org' }), /meant for other services only/);
    });

    it('a target list (VOMS shape) naming another service: ignored', async () => {
      const ac = withExtensions(good, (e) => [
        ...withoutTargets(e),
        acExtensionDer(OID_AC_TARGETS, true, targets('other.example.org', 'voms')),
      ]);
      check.ignored(await proxyWithAc(alice, acSequence(ac)), /meant for other services only \(other\.example\.org\)/);
    });

    it('a target list naming this service is used, in the shape VOMS writes and in the shape of RFC 5755', async () => {
      for (const shape of ['voms', 'rfc'] as const) {
        const ac = withExtensions(good, (e) => [
          ...withoutTargets(e),
          acExtensionDer(OID_AC_TARGETS, true, targets(SELF, shape)),
        ]);
        assert.deepEqual(auth(await proxyWithAc(alice, acSequence(ac))).voms?.fqans, ATLAS, shape);
      }
    });

    it('the re-signing itself changes nothing: an unchanged AC signed again verifies', async () => {
      const ac = withExtensions(good, (e) => e);
      assert.deepEqual(auth(await proxyWithAc(alice, acSequence(ac))).voms?.fqans, ATLAS);
    });
  });
});
