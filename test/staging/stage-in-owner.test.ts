// Inputs staged into the session of a job under a local account (a real account) land
// as the account's files, in directories that are the account's too.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import { patternBuffer, TestServer } from './helpers/test-server.js';
import { never, recordingLogger, stagingConfig, tempDir } from './helpers/fixtures.js';
import { assertRoot, createAccount, removeAccounts, skipUnlessRoot, type TestAccount } from '../helpers/local-accounts.js';

describe('stage-in into the session of a job under a local account', { skip: skipUnlessRoot('staging into sessions of local accounts') }, () => {
  let acct: TestAccount;
  before(() => {
    assertRoot();
    acct = createAccount();
  });
  after(() => removeAccounts());

  it("downloads become the account's files, in the account's directories", async (t) => {
    const server = await TestServer.start();
    t.after(() => server.close());
    const root = await tempDir(t);
    await chmod(root, 0o711);
    const sessionDir = join(root, 'session');
    await mkdir(sessionDir, { mode: 0o700 });
    await chown(sessionDir, acct.uid, acct.gid);
    server.resources.set('/a.bin', { body: patternBuffer(70_000) });
    server.resources.set('/run.sh', { body: Buffer.from('#!/bin/sh\necho hi\n') });
    const stager = new Stager({ config: stagingConfig({ cache: { enabled: false } }), credentials: anonymousCredentials, logger: recordingLogger() });
    const files = [
      { name: 'in/deep/a.bin', source: server.url('/a.bin'), executable: false },
      { name: 'run.sh', source: server.url('/run.sh'), executable: true },
    ];
    const r = await stager.stageIn({ id: 'owned', owner: '/CN=alice', sessionDir, files }, never);
    assert.equal(r.ok, true, r.failureReason);
    for (const p of ['in', 'in/deep', 'in/deep/a.bin', 'run.sh']) {
      const s = await stat(join(sessionDir, p));
      assert.deepEqual([p, s.uid, s.gid], [p, acct.uid, acct.gid]);
    }
    assert.equal((await stat(join(sessionDir, 'run.sh'))).mode & 0o111, 0o111);
  });
});
