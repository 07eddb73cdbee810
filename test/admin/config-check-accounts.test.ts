// `ceres admin config check` refuses what the start refuses about the accounts jobs run
// as: a mapping to root or to a system account below accounts.minUid, and a default
// account that is root or missing. Before, such a file passed ("OK").
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from '../helpers/service.js';
import { ceresCli } from './cli.js';

const dir = tempDir('config-accounts');
after(() => removeDir(dir));

let n = 0;
async function check(config: object): Promise<{ code: number; stderr: string; stdout: string }> {
  const f = join(dir, `c${n++}.json`);
  writeFileSync(f, JSON.stringify({ stateDir: join(dir, 'state'), ...config }));
  return ceresCli(['admin', 'config', 'check', f]);
}

const mapped = (account: string, extra: object = {}) => ({
  authorization: { groups: [{ name: 'all', match: [{ all: true }] }], allow: ['all'] },
  mapping: [{ group: 'all', account }],
  ...extra,
});

describe('config check: the accounts jobs run as', () => {
  it('passes the embedded default (nobody) and a mapping to a system account under a lowered minimum', async () => {
    assert.equal((await check({})).code, 0);
    const low = await check(mapped('daemon', { accounts: { minUid: 1, shared: ['daemon'] } }));
    assert.equal(low.code, 0, low.stderr);
  });

  it('refuses a mapping to root', async () => {
    const r = await check(mapped('root', { accounts: { shared: ['root'] } }));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config key 'mapping': local account root has uid 0: jobs never run as root/);
  });

  it('refuses a mapping to a system account below accounts.minUid', async () => {
    const r = await check(mapped('daemon', { accounts: { shared: ['daemon'] } }));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /local account daemon has uid 1, below the lowest uid a job may run as \(accounts\.minUid 1000\)/,
    );
  });

  it('refuses a mapped account that does not exist', async () => {
    const r = await check(mapped('nosuchacct-ceres', { accounts: { shared: ['nosuchacct-ceres'] } }));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /local account nosuchacct-ceres does not exist/);
  });

  it('refuses root or a missing account as the default account', async () => {
    const root = await check({ accounts: { default: 'root' } });
    assert.equal(root.code, 1);
    assert.match(root.stderr, /config key 'accounts\.default': local account root has uid 0/);
    const missing = await check({ accounts: { default: 'nosuchacct-ceres' } });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /config key 'accounts\.default': local account nosuchacct-ceres does not exist/);
  });
});
