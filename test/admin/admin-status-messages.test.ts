// `ceres admin status` says what an administrator needs: with one queue drained the service
// still accepts jobs ("yes, except queue X"; before, "no, draining: queue X"), and a user
// who cannot open the database learns which file, why, and whom to run as (before, SQLite's
// "unable to open database file" alone, or "does not exist" for a folder it could not enter).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from '../helpers/service.js';
import { openDatabase } from '../../src/store/database.js';
import { createAccount, isRoot, removeAccounts, skipUnlessRoot, type TestAccount } from '../helpers/local-accounts.js';
import { admin, MAIN, type CliResult } from './cli.js';

const dir = tempDir('admin-status');
after(() => removeDir(dir));

/** A state directory with an empty database, as the service leaves it (0711 folder, 0600 database). */
function stateDir(name: string): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true, mode: 0o711 });
  openDatabase(join(d, 'ceres.db')).close();
  chmodSync(join(d, 'ceres.db'), 0o600);
  return d;
}

describe('admin status: which jobs are accepted', () => {
  it('one queue drained: the other queues accept jobs, and the drained one is named with its reason', async () => {
    const s = stateDir('one-queue');
    assert.equal((await admin(s, 'drain', '--queue', 'short', '--reason', 'disk swap')).code, 0);
    const r = await admin(s, 'status');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^accepting jobs: yes, except queue short \(draining: disk swap\)$/m);
  });

  it('the service drained: no, with the reason, and the drained queues as well', async () => {
    const s = stateDir('service');
    assert.equal((await admin(s, 'drain', '--queue', 'short', '--reason', 'disk swap')).code, 0);
    assert.equal((await admin(s, 'drain', '--reason', 'upgrade')).code, 0);
    const r = await admin(s, 'status');
    assert.match(
      r.stdout,
      /^accepting jobs: no, draining: service \(upgrade\); also queue short \(draining: disk swap\)$/m,
    );
  });

  it('nothing drained: yes', async () => {
    assert.match((await admin(stateDir('none'), 'status')).stdout, /^accepting jobs: yes$/m);
  });
});

describe(
  'admin status as a user who cannot open the database',
  { skip: skipUnlessRoot('running as another user') },
  () => {
    let other: TestAccount;
    before(() => {
      if (isRoot) other = createAccount();
    });
    after(() => {
      if (isRoot) removeAccounts();
    });
    const runAs = (account: string, ...args: string[]): Promise<CliResult> =>
      new Promise((resolve) => {
        execFile(
          'runuser',
          ['-u', account, '--', process.execPath, MAIN, 'admin', ...args],
          { timeout: 60_000 },
          (err, stdout, stderr) =>
            resolve({ code: err === null ? 0 : Number(err.code ?? 1), stdout, stderr, json: () => JSON.parse(stdout) }),
        );
      });

    it("names the database, why it cannot be opened, and whom to run as: the database is root's", async () => {
      const s = stateDir('private');
      const r = await runAs(other.name, '--state-dir', s, 'status');
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stderr, /unable to open database file$/m);
      assert.match(
        r.stderr,
        new RegExp(
          `cannot open the database ${s}/ceres\\.db: permission denied \\(${s}/ceres\\.db is uid 0's; this command runs as uid ${other.uid}\\): run the command as root`,
        ),
      );
    });

    it('a state directory it cannot enter is not said not to exist', async () => {
      const s = stateDir('closed');
      chmodSync(s, 0o700);
      const r = await runAs(other.name, '--state-dir', s, 'status');
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stderr, /does not exist/);
      assert.match(
        r.stderr,
        new RegExp(`cannot open the database ${s}/ceres\\.db: its folder cannot be entered .*run the command as root`),
      );
    });

    it("a database of the service's own account: run as that account", async () => {
      const s = stateDir('owned');
      chmodSync(s, 0o700);
      const { chownSync } = await import('node:fs');
      chownSync(s, other.uid, other.gid);
      chownSync(join(s, 'ceres.db'), other.uid, other.gid);
      const r = await admin(s, 'status');
      assert.equal(r.code, 0, 'root opens it');
      const third = createAccount();
      const denied = await runAs(third.name, '--state-dir', s, 'status');
      assert.match(
        denied.stderr,
        new RegExp(
          `run the command as ${other.name} \\(the user the service runs as\\) or as root, e\\.g\\. runuser -u ${other.name} -- ceres admin`,
        ),
      );
    });
  },
);
