// The scheme registry: native schemes always, gfal2 schemes only with their plugin, and
// the probe against the gfal2 installed here (when it is).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SchemeRegistry, NATIVE_ONLY } from '../../src/staging/schemes.js';
import { GFAL2_PYTHON, probeGfal2Plugins } from '../../src/staging/gfal2/probe.js';

describe('SchemeRegistry', () => {
  it('sends http, https, dav and davs the native way even with gfal2 http plugin installed', () => {
    const r = new SchemeRegistry(['http-2.21.3', 'xrootd-2.21.3']);
    for (const s of ['http', 'https', 'dav', 'DAVS']) assert.equal(r.pathFor(s), 'native', s);
    for (const s of ['root', 'xroot', 's3', 's3s']) assert.equal(r.pathFor(s), 'gfal2', s);
  });

  it('knows no scheme whose plugin is missing, nor an unknown one', () => {
    const r = new SchemeRegistry(['xrootd-2.21.3', 'weird-1.0']);
    for (const s of ['gsiftp', 'srm', 's3', 'sftp', 'weird', 'gopher']) assert.equal(r.pathFor(s), undefined, s);
    assert.equal(NATIVE_ONLY.pathFor('root'), undefined);
    assert.deepEqual(r.supported(), ['http', 'https', 'dav', 'davs', 'root', 'roots', 'xroot', 'xroots']);
  });

  it('finds no plugin when the Python it asks does not exist or has no gfal2', async () => {
    assert.deepEqual(await probeGfal2Plugins('/nonexistent/python3'), []);
    assert.deepEqual(await probeGfal2Plugins('/bin/false'), []);
  });

  it('lists the xrootd plugin of the gfal2 installed here', { skip: !existsSync(GFAL2_PYTHON) }, async () => {
    const plugins = await probeGfal2Plugins();
    if (process.env['CERES_REQUIRE_GFAL2'] !== '1' && plugins.length === 0) return;
    assert.ok(
      plugins.some((p) => p.startsWith('xrootd')),
      plugins.join(','),
    );
  });
});
