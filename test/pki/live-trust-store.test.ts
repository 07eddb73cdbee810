/**
 * The CA directory followed while the service runs (src/pki/live-trust-store.ts), on a
 * real directory laid out as IGTF ships it, with CAs and CRLs made by openssl: CAs added
 * and removed, updates caught half way (a CA file cut short, the directory emptied or
 * gone, rsync's temporary files), and CAs whose CRL expired.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LiveTrustStore } from '../../src/pki/live-trust-store.js';
import { parseCertificate, pemBlocks } from '../../src/pki/certificate.js';
import { PkiError } from '../../src/pki/pki-error.js';
import { tempDir } from '../helpers/pki.js';
import { installCa, installCrl, opensslCa, removeCa, type OpensslCa } from '../helpers/openssl-ca.js';

const work = tempDir(after, 'ceres-live-trust-');
let n = 0;
const newDir = (): string => {
  const d = join(work, `certificates-${n++}`);
  mkdirSync(d);
  return d;
};

const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
const log = {
  info: (obj: object, msg: string) => lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
  warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
};
const warnings = (msg: RegExp) => lines.filter((l) => l.level === 'warn' && msg.test(l.msg));

const HOUR = 3600_000;
let caA: OpensslCa;
let caB: OpensslCa;
let caC: OpensslCa;
const dns = (store: LiveTrustStore) => store.current.anchors.map((c) => c.subjectOneline).sort();

before(() => {
  caA = opensslCa(work, 'a', '/DC=org/DC=ceres-live/CN=CA A');
  caB = opensslCa(work, 'b', '/DC=org/DC=ceres-live/CN=CA B');
  caC = opensslCa(work, 'c', '/DC=org/DC=ceres-live/CN=CA C');
});

describe('LiveTrustStore', () => {
  it('takes in a CA added to the directory and drops one removed from it; the view follows', () => {
    const d = newDir();
    installCa(d, caA);
    const live = new LiveTrustStore(d, { log });
    const first = live.current;
    assert.deepEqual(dns(live), [caA.dn]);
    assert.deepEqual(live.reload(Date.now()), { outcome: 'unchanged' });
    assert.equal(live.current, first, 'an unchanged directory keeps the store (and its cache of verified chains)');

    installCa(d, caB);
    const added = live.reload(Date.now());
    assert.equal(added.outcome, 'applied');
    assert.deepEqual(added.outcome === 'applied' && added.added.map((c) => c.subjectOneline), [caB.dn]);
    assert.deepEqual(dns(live), [caA.dn, caB.dn]);
    assert.notEqual(live.current, first, 'a change makes a new store');
    assert.equal(live.view.anchors.length, 2, 'the view answers from the new store');
    const b = parseCertificate(pemBlocks(caB.pem)[0] as Buffer);
    assert.ok(live.view.isAnchor(b));

    removeCa(d, caB);
    const removed = live.reload(Date.now());
    assert.deepEqual(removed.outcome === 'applied' && removed.removed.map((c) => c.subjectOneline), [caB.dn]);
    assert.deepEqual(dns(live), [caA.dn]);
    assert.ok(!live.view.isAnchor(b), 'the removed CA is no longer an anchor, through the view too');
    assert.equal(live.view.pems.length, 1);
  });

  it('a CA file cut short keeps its previous certificate, says so once, and is read again until whole', () => {
    const d = newDir();
    installCa(d, caA);
    installCa(d, caB);
    const live = new LiveTrustStore(d, { log });
    const file = join(d, `${caB.hash}.0`);
    writeFileSync(file, caB.pem.slice(0, caB.pem.length >> 1)); // rewritten in place, caught half way
    assert.deepEqual(live.reload(Date.now()), { outcome: 'unchanged' });
    assert.deepEqual(dns(live), [caA.dn, caB.dn], 'CA B stays trusted');
    assert.equal(warnings(/CA file not usable: its previous certificates stay trusted/).length, 1);
    assert.equal(warnings(/CA file not usable/).at(-1)?.obj.file, `${caB.hash}.0`);
    live.reload(Date.now());
    assert.equal(warnings(/CA file not usable/).length, 1, 'said once, not at every look');
    // Finished as another CA's certificate (a CA re-keyed under the same name): read again.
    writeFileSync(file, caC.pem);
    const r = live.reload(Date.now());
    assert.equal(r.outcome, 'applied');
    assert.deepEqual(dns(live), [caA.dn, caC.dn]);
  });

  it('a new CA file that is half written is skipped and taken once it is whole', () => {
    const d = newDir();
    installCa(d, caA);
    const live = new LiveTrustStore(d, { log });
    const file = join(d, `${caB.hash}.0`);
    writeFileSync(file, caB.pem.slice(0, 100));
    assert.deepEqual(live.reload(Date.now()), { outcome: 'unchanged' });
    assert.ok(warnings(/CA file not usable: skipped/).some((l) => l.obj.file === `${caB.hash}.0`));
    writeFileSync(file, caB.pem);
    assert.equal(live.reload(Date.now()).outcome, 'applied');
    assert.deepEqual(dns(live), [caA.dn, caB.dn]);
  });

  it('rsync and rpm temporary files are not taken for CAs', () => {
    const d = newDir();
    installCa(d, caA);
    const live = new LiveTrustStore(d, { log });
    writeFileSync(join(d, `.${caB.hash}.0.Xa81Qz`), caB.pem); // rsync
    writeFileSync(join(d, `${caB.hash}.0;5f2a1b3c`), caB.pem); // rpm
    assert.deepEqual(live.reload(Date.now()), { outcome: 'unchanged' });
    assert.deepEqual(dns(live), [caA.dn]);
  });

  it('a directory emptied, or moved away, during an update keeps the whole previous store, said once', () => {
    const d = newDir();
    installCa(d, caA);
    installCa(d, caB);
    const live = new LiveTrustStore(d, { log });
    const before = live.current;
    const moved = `${d}.old`;
    renameSync(d, moved);
    const gone = live.reload(Date.now());
    assert.equal(gone.outcome, 'kept');
    assert.match(gone.outcome === 'kept' ? gone.reason : '', /cannot read CA directory .*ENOENT/);
    assert.equal(live.current, before);
    mkdirSync(d); // the new directory appears, still empty
    const empty = live.reload(Date.now());
    assert.equal(empty.outcome, 'kept');
    assert.match(empty.outcome === 'kept' ? empty.reason : '', /no usable CA certificate/);
    assert.equal(live.reload(Date.now()).outcome, 'kept');
    assert.equal(live.current, before, 'the users of every CA are still accepted');
    const kept = warnings(/CA directory not reloaded: the trusted CAs are kept/);
    assert.equal(kept.length, 2, 'one line per reason, not one per look');
    installCa(d, caB);
    const back = live.reload(Date.now());
    assert.equal(back.outcome, 'applied');
    assert.deepEqual(back.outcome === 'applied' && back.removed.map((c) => c.subjectOneline), [caA.dn]);
    rmSync(moved, { recursive: true });
  });

  it('an unusable directory at start is an error, as before', () => {
    assert.throws(() => new LiveTrustStore(join(work, 'absent')), PkiError);
    assert.throws(() => new LiveTrustStore(newDir()), /no usable CA certificate/);
  });

  it('lists the CAs whose CRL is past its nextUpdate, and forgets them when a fresh CRL comes', () => {
    const d = newDir();
    installCa(d, caA);
    installCa(d, caB);
    installCrl(d, caA);
    installCrl(d, caB, { lastUpdate: new Date(Date.now() - 48 * HOUR), nextUpdate: new Date(Date.now() - HOUR) });
    const live = new LiveTrustStore(d, { log, crlRecheckMs: 3_600_000 });
    const expired = live.current.expiredCrls(Date.now());
    assert.deepEqual(
      expired.map((e) => e.ca.subjectOneline),
      [caB.dn],
    );
    assert.ok((expired[0]?.nextUpdate.getTime() ?? 0) < Date.now());
    installCrl(d, caB);
    live.reload(Date.now());
    assert.equal(
      live.current.expiredCrls(Date.now()).length,
      1,
      'CRLs are looked at again only after their recheck time',
    );
    live.reload(Date.now(), true);
    assert.deepEqual(live.current.expiredCrls(Date.now()), [], 'at once when forced (SIGHUP)');
    assert.ok(readFileSync(join(d, `${caB.hash}.r0`), 'latin1').includes('X509 CRL'));
  });
});
