// Sessions of jobs under a local account, with a real account: the session directory
// is the account's (0700), what the REST interface writes into it becomes the
// account's, and the service (root) neither reads nor writes for the client a file the
// account could not read or write itself (a hard link the job made to root's files).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { A, makeFixture, type Fixture } from './fixture.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

const J = { ...A, accept: 'application/json' };

describe(
  'session directories of jobs under a local account',
  { skip: skipUnlessRoot('sessions owned by local accounts') },
  () => {
    let f: Fixture;
    let acct: TestAccount;
    let id: string;
    let dir: string;
    before(async () => {
      assertRoot();
      acct = createAccount();
      f = await makeFixture({ tracker: { maxRanges: 4 } });
      // The sessions folder is traversable (docs/security.md); here its parent too.
      await chmod(f.root, 0o711);
      await chmod(join(f.root, 'session'), 0o711);
      id = await f.newJob(A['x-test-dn'], { uid: acct.uid, gid: acct.gid });
      dir = f.sessionDir(id);
    });
    after(async () => {
      await f?.close();
      removeAccounts();
    });

    const put = (path: string, payload: string, headers: Record<string, string> = {}) =>
      f.app.inject({ method: 'PUT', url: f.url(id, path), headers: { ...J, ...headers }, payload });

    it("is made 0700 and the account's", async () => {
      const s = await stat(dir);
      assert.equal(s.mode & 0o777, 0o700);
      assert.equal(s.uid, acct.uid);
      assert.equal(s.gid, acct.gid);
    });

    it("a file uploaded with PUT, and the directories made for it, are the account's", async () => {
      assert.equal((await put('in.txt', 'whole')).statusCode, 200);
      assert.equal((await put('sub/deeper/in.txt', 'nested')).statusCode, 200);
      for (const p of ['in.txt', 'sub', 'sub/deeper', 'sub/deeper/in.txt']) {
        const s = await stat(join(dir, p));
        assert.deepEqual([p, s.uid, s.gid], [p, acct.uid, acct.gid]);
      }
    });

    it("a ranged PUT makes the account's file", async () => {
      assert.equal((await put('ranged.bin', 'abc', { 'content-range': 'bytes 0-2/6' })).statusCode, 200);
      assert.equal((await put('ranged.bin', 'def', { 'content-range': 'bytes 3-5/6' })).statusCode, 200);
      assert.equal(await readFile(join(dir, 'ranged.bin'), 'utf8'), 'abcdef');
      assert.equal((await stat(join(dir, 'ranged.bin'))).uid, acct.uid);
    });

    it("does not serve or write a file of root's the account could not read (as a hard link the job made would be)", async () => {
      const secret = join(dir, 'rootfile');
      await writeFile(secret, 'root only\n', { mode: 0o600 });
      const get = await f.app.inject({ method: 'GET', url: f.url(id, 'rootfile'), headers: A });
      assert.equal(get.statusCode, 403, get.body);
      assert.doesNotMatch(get.body, /root only/);
      const r = await put('rootfile', 'x', { 'content-range': 'bytes 0-0/1' });
      assert.equal(r.statusCode, 403, r.body);
      assert.equal(await readFile(secret, 'utf8'), 'root only\n');
    });

    it("serves the account's own files and world-readable ones", async () => {
      await writeFile(join(dir, 'shared'), 'anyone\n', { mode: 0o644 });
      const r = await f.app.inject({ method: 'GET', url: f.url(id, 'shared'), headers: A });
      assert.equal(r.statusCode, 200);
      assert.equal(r.body, 'anyone\n');
      assert.equal((await f.app.inject({ method: 'GET', url: f.url(id, 'in.txt'), headers: A })).body, 'whole');
    });
  },
);
