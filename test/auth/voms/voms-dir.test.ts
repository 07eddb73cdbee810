/**
 * LSC files and the VOMS directory reader (no VOMS tools needed): line rules, name
 * comparison, several chains, files that cannot be used, and following changes.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lscAccepts, lscNames, parseLsc } from '../../../src/auth/voms/lsc.js';
import { VomsDir } from '../../../src/auth/voms/voms-dir.js';
import { encodeOnelineDn, parseName } from '../../../src/pki/dn.js';

const name = (dn: string) => parseName(encodeOnelineDn(dn));
const SERVER = '/DC=ch/DC=cern/OU=computers/CN=voms2.cern.ch';
const CA = '/DC=ch/DC=cern/CN=CERN Grid Certification Authority';
const ROOT = '/DC=ch/DC=cern/CN=CERN Root Certification Authority 2';

describe('LSC files', () => {
  it('reads subject and issuer lines, skipping comments and blank lines', () => {
    assert.deepEqual(parseLsc(`# atlas\n\n${SERVER}\r\n  ${CA}  \n`), [[SERVER, CA]]);
  });

  it('reads several chains separated by a NEXT CHAIN line, and drops a chain of one line', () => {
    const text = `${SERVER}\n${CA}\n------ NEXT CHAIN ------\n/DC=org/CN=voms-new.example.org\n${CA}\n${ROOT}\n------ NEXT CHAIN ------\n/DC=org/CN=lonely\n`;
    assert.deepEqual(parseLsc(text), [
      [SERVER, CA],
      ['/DC=org/CN=voms-new.example.org', CA, ROOT],
    ]);
  });

  it('compares names as OpenSSL does (case and inner spacing of values do not matter), not as text', () => {
    assert.ok(lscNames('/DC=CH/DC=cern/OU=Computers/CN=VOMS2.cern.ch', name(SERVER)));
    assert.ok(lscNames('/DC=ch/DC=cern/CN=CERN  Grid Certification Authority', name(CA)));
    assert.ok(!lscNames('/DC=ch/DC=cern/CN=voms2.cern.ch', name(SERVER)));
    assert.ok(!lscNames('not a DN', name(SERVER)));
  });

  it('accepts a path only when every line of one chain names it, in order', () => {
    const chains = parseLsc(`${SERVER}\n${CA}\n${ROOT}\n`);
    assert.ok(lscAccepts(chains, [name(SERVER), name(CA), name(ROOT)]));
    assert.ok(!lscAccepts(chains, [name(SERVER), name(CA)]), 'a path shorter than the LSC');
    assert.ok(!lscAccepts(chains, [name(SERVER), name(ROOT), name(CA)]));
    assert.ok(
      lscAccepts(parseLsc(`${SERVER}\n${CA}\n`), [name(SERVER), name(CA), name(ROOT)]),
      'two lines: subject and issuer only',
    );
  });
});

describe('the VOMS directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-vomsdir-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const logs: string[] = [];
  const log = { info: (_o: object, m: string) => logs.push(m), warn: (_o: object, m: string) => logs.push(m) };

  it('is off while absent, and found when it appears', () => {
    const d = new VomsDir(join(dir, 'later'), 0, log);
    const g0 = d.refresh(1000);
    assert.equal(d.present, false);
    mkdirSync(join(dir, 'later', 'atlas'), { recursive: true });
    writeFileSync(join(dir, 'later', 'atlas', 'voms.example.org.lsc'), `${SERVER}\n${CA}\n`);
    assert.notEqual(d.refresh(2000), g0);
    assert.equal(d.present, true);
    assert.deepEqual(d.lsc('atlas', 'voms.example.org'), [[SERVER, CA]]);
    assert.equal(d.lsc('atlas', 'other.example.org'), undefined);
    assert.equal(d.lsc('cms', 'voms.example.org'), undefined);
  });

  it('skips an LSC that names no chain and a certificate file that is not one, saying so', () => {
    const root = join(dir, 'bad');
    mkdirSync(join(root, 'atlas'), { recursive: true });
    writeFileSync(join(root, 'atlas', 'voms.example.org.lsc'), `${SERVER}\n`);
    writeFileSync(join(root, 'server.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    writeFileSync(join(root, 'atlas.lsc'), `${SERVER}\n${CA}\n`); // an LSC outside a VO folder means nothing
    logs.length = 0;
    const d = new VomsDir(root, 0, log);
    d.refresh(0);
    assert.equal(d.lsc('atlas', 'voms.example.org'), undefined);
    assert.equal(d.certificates.length, 0);
    assert.ok(logs.includes('LSC file names no chain (a subject line and an issuer line are needed)'));
    assert.ok(logs.includes('VOMS directory certificate not usable'));
  });

  it('looks again only after recheckMs, and also when the clock went back', () => {
    const root = join(dir, 'timed');
    mkdirSync(join(root, 'atlas'), { recursive: true });
    const d = new VomsDir(root, 5000, log);
    const g0 = d.refresh(100_000);
    writeFileSync(join(root, 'atlas', 'voms.example.org.lsc'), `${SERVER}\n${CA}\n`);
    assert.equal(d.refresh(101_000), g0, 'within recheckMs: not looked at');
    const g1 = d.refresh(105_000);
    assert.notEqual(g1, g0);
    rmSync(join(root, 'atlas', 'voms.example.org.lsc'));
    // A look stamped far ahead (a clock stepped back since) must not stop the next looks.
    d.refresh(10_000_000);
    writeFileSync(join(root, 'atlas', 'voms.example.org.lsc'), `${SERVER}\n${CA}\n`);
    d.refresh(106_000);
    assert.deepEqual(d.lsc('atlas', 'voms.example.org'), [[SERVER, CA]]);
  });

  it('notices an LSC edited in place', () => {
    const root = join(dir, 'edit');
    mkdirSync(join(root, 'atlas'), { recursive: true });
    const f = join(root, 'atlas', 'voms.example.org.lsc');
    writeFileSync(f, `${SERVER}\n${CA}\n`);
    const d = new VomsDir(root, 0, log);
    const g0 = d.refresh(0);
    writeFileSync(f, `${SERVER}\n${ROOT}\n`);
    assert.notEqual(d.refresh(1), g0);
    assert.deepEqual(d.lsc('atlas', 'voms.example.org'), [[SERVER, ROOT]]);
  });
});
