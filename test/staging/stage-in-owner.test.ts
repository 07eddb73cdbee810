// Inputs staged into the session of a job under a local account (a real account) land
// as the account's files, in directories that are the account's too.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { FileCache } from '../../src/staging/cache/file-cache.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import { patternBuffer, TestServer } from './helpers/test-server.js';
import { never, recordingLogger, stagingConfig, tempDir } from './helpers/fixtures.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe(
  'stage-in into the session of a job under a local account',
  { skip: skipUnlessRoot('staging into sessions of local accounts') },
  () => {
    let acct: TestAccount;
    before(() => {
      assertRoot();
      acct = createAccount();
    });
    after(() => removeAccounts());

    /** A test server and a session directory of the account (0700), as submission makes it. */
    async function setup(
      t: Parameters<typeof tempDir>[0],
    ): Promise<{ server: TestServer; root: string; sessionDir: string }> {
      const server = await TestServer.start();
      t.after(() => server.close());
      const root = await tempDir(t);
      await chmod(root, 0o711);
      const sessionDir = join(root, 'session');
      await mkdir(sessionDir, { mode: 0o700 });
      await chown(sessionDir, acct.uid, acct.gid);
      return { server, root, sessionDir };
    }

    it("downloads become the account's files, in the account's directories", async (t) => {
      const { server, sessionDir } = await setup(t);
      server.resources.set('/a.bin', { body: patternBuffer(70_000) });
      server.resources.set('/run.sh', { body: Buffer.from('#!/bin/sh\necho hi\n') });
      const stager = new Stager({
        config: stagingConfig({ cache: { enabled: false } }),
        credentials: anonymousCredentials,
        logger: recordingLogger(),
      });
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

    it("an input from the cache is the account's own copy; the cache file stays the service's", async (t) => {
      const { server, root, sessionDir } = await setup(t);
      server.resources.set('/c.bin', { body: patternBuffer(10_000) });
      const config = stagingConfig({ cache: { enabled: true, maxBytes: 1e9 } });
      const cache = await FileCache.open({
        dir: join(root, 'cache'),
        maxBytes: 1e9,
        accessRecheckMs: 3_600_000,
        lockStaleMs: 60_000,
      });
      const stager = new Stager({ config, credentials: anonymousCredentials, cache, logger: recordingLogger() });
      const r = await stager.stageIn(
        {
          id: 'cached',
          owner: '/CN=alice',
          sessionDir,
          files: [{ name: 'c.bin', source: server.url('/c.bin'), executable: false }],
        },
        never,
      );
      assert.equal(r.ok, true, r.failureReason);
      const s = await stat(join(sessionDir, 'c.bin'));
      assert.deepEqual([s.uid, s.nlink], [acct.uid, 1], "a copy, the account's (a link would share the cache file)");
      const data = (await readdir(join(root, 'cache', 'data'), { recursive: true, withFileTypes: true })).filter(
        (e) => e.isFile() && !e.name.includes('.'),
      );
      assert.equal(data.length, 1, 'the input went through the cache');
      const cached = await stat(join(data[0]?.parentPath ?? '', data[0]?.name ?? ''));
      assert.deepEqual([cached.uid, cached.nlink], [0, 1], 'the cache file is not given away, nor linked');
    });
  },
);
