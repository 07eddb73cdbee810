// A first start makes the database: a local account waiting for it (what a process of any
// user of the machine could do) can never open it, not even between SQLite making the file
// and the start's check of the state modes.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import {
  assertRoot,
  createAccount,
  openAsItAppears,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe('the database of a first start', { skip: skipUnlessRoot('opening files as a local account') }, () => {
  let work = '';
  let job: TestAccount;
  let ceres: RunningCeres | undefined;
  before(() => {
    assertRoot();
    job = createAccount();
    work = tempDir('first-start');
    chmodSync(work, 0o711);
  });
  after(async () => {
    if (ceres) await stopCeres(ceres);
    removeAccounts();
    if (work) removeDir(work);
  });

  it('is never open to another account, from the moment it exists', async () => {
    const stateDir = join(work, 'state');
    const db = join(stateDir, 'ceres.db');
    const said = await openAsItAppears(job, db, async () => {
      ceres = await startCeres({ stateDir });
    });
    assert.doesNotMatch(said, /OPENED/, 'the account opened the database');
    assert.match(said, /Permission denied/);
    assert.equal(statSync(db).mode & 0o777, 0o600);
  });

  it('keeps its lock file from other accounts (a read lock held on it would stop the next start)', async () => {
    const stateDir = join(work, 'state2');
    const lock = join(stateDir, 'ceres.lock');
    const said = await openAsItAppears(job, lock, async () => {
      const c = await startCeres({ stateDir });
      await stopCeres(c);
    });
    assert.doesNotMatch(said, /OPENED/, 'the account opened the lock file');
    assert.equal(statSync(lock).mode & 0o777, 0o600);
  });
});
