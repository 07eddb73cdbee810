// A service that is not root refuses to start with a mapping, saying why and what to do
// (docs/security.md): started as a real unprivileged account.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { removeDir, tempDir } from '../helpers/service.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

describe('a mapping without root', { skip: skipUnlessRoot('starting the service as an unprivileged account') }, () => {
  let acct: TestAccount;
  let work: string;
  before(() => {
    assertRoot();
    acct = createAccount();
    work = tempDir('noroot');
    chmodSync(work, 0o711);
  });
  after(() => {
    removeAccounts();
    if (work) removeDir(work);
  });

  /** `ceres serve` as the account with `config`; its exit status and output (stopped after 20 s should it run). */
  function serve(name: string, config: Record<string, unknown>): { status: number | null; out: string } {
    const dir = join(work, name);
    mkdirSync(dir);
    chownSync(dir, acct.uid, acct.gid);
    const cfg = join(dir, 'config.json');
    writeFileSync(cfg, JSON.stringify({ log: { level: 'warn' }, ...config }));
    const r = spawnSync(
      'runuser',
      [
        '-u',
        acct.name,
        '--',
        process.execPath,
        MAIN,
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--state-dir',
        join(dir, 'state'),
        '--config',
        cfg,
      ],
      { encoding: 'utf8', timeout: 20_000 },
    );
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  }

  it('refuses to start, naming the uid and what to do', (t) => {
    // The account must be able to read the build (a checkout under a private home is not).
    const readable = [MAIN, createRequire(import.meta.url).resolve('pino')].every(
      (f) => spawnSync('runuser', ['-u', acct.name, '--', 'test', '-r', f]).status === 0,
    );
    if (!readable) {
      t.skip('an unprivileged account cannot read this build (checked out in a private directory)');
      return;
    }
    const r = serve('mapped', {
      authorization: { groups: [{ name: 'all', match: [{ all: true }] }], allow: ['all'] },
      mapping: [{ group: 'all', account: 'nobody' }],
      accounts: { shared: ['nobody'] },
    });
    assert.notEqual(r.status, 0, r.out);
    assert.match(r.out, new RegExp(`runs as uid ${acct.uid}, not root`));
    assert.match(r.out, /Run the service as root, or remove the mapping section/);
  });
});
