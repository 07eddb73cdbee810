// The job's log directory (xRSL gmlog) written into its session: the files and their
// contents, and a job that plants links, FIFOs, hard links, huge files or a file in the
// way under the log names: nothing outside the session is written, nothing planted is
// opened, no write hangs. Under a real local account, what is made is the account's.
// Its way through the real service and the ARC client: test/interop/gmlog.test.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  link,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_GMLOG_FILE_BYTES, writeGmlog, type GmlogSources } from '../../src/jobs/gmlog.js';
import { SessionDirs } from '../../src/sessions/session-dirs.js';
import { ControlDir } from '../../src/store/control-dir.js';
import type { JobRecord } from '../../src/store/job-record.js';
import type { SessionOwner } from '../../src/fs/session-owner.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { assertRoot, createAccount, isRoot, removeAccounts, skipUnlessRoot } from '../helpers/local-accounts.js';

let work: string;
let sessions: SessionDirs;
let control: ControlDir;
let src: GmlogSources;
let n = 0;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'ceres-gmlog-'));
  await mkdir(join(work, 'sessions'));
  sessions = await SessionDirs.open(join(work, 'sessions'));
  control = new ControlDir(join(work, 'control'));
  src = { control, sessions, serviceUrl: () => 'https://ce.example.org/arex' };
});

after(async () => {
  await sessions.close();
  await rm(work, { recursive: true, force: true });
});

/** A failed job with a log directory, its session made (for `owner`), its control files written. */
async function failedJob(logDir: string | undefined, owner?: SessionOwner): Promise<{ j: JobRecord; dir: string }> {
  const id = `gmlogjob${++n}${randomBytes(4).toString('hex')}`;
  const sessionIdent = sessions.createSync(id, owner);
  await control.append(id, 'errors', '2026-12-02T01:32:15Z Job state change ACCEPTED -> PREPARING   Reason: x\n');
  await control.write(id, 'diag', 'exitcode=3\n');
  const j = {
    id,
    state: 'FINISHING',
    pending: false,
    failureReason: 'Job finished with exit code 3',
    failedState: 'INLRMS',
    failedCause: 'client',
    createdAt: Date.parse('2026-12-02T01:32:15Z'),
    eraseAt: null,
    engine: {},
    queue: 'main',
    localId: '42',
    ownerDn: '/CN=someone',
    rerunsLeft: 0,
    clientHost: '127.0.0.1',
    delegationId: null,
    sessionIdent,
    description: { executable: '/bin/false', arguments: [], logDir, inputFiles: [], outputFiles: [] },
  } as unknown as JobRecord;
  return { j, dir: join(work, 'sessions', id) };
}

const rejectsWith = async (p: Promise<unknown>, code: string): Promise<void> => {
  await assert.rejects(p, (e: unknown) => isCeError(e) && e.code === code);
};

describe('the log directory of a job', () => {
  it('holds errors, local, status, failed and diag, copies of what the service keeps', async () => {
    const { j, dir } = await failedJob('gmlog');
    await writeGmlog(src, j);
    assert.deepEqual((await readdir(join(dir, 'gmlog'))).sort(), ['diag', 'errors', 'failed', 'local', 'status']);
    assert.equal(await readFile(join(dir, 'gmlog/errors'), 'utf8'), (await control.read(j.id, 'errors'))?.toString());
    assert.equal(await readFile(join(dir, 'gmlog/failed'), 'utf8'), 'Job finished with exit code 3\n');
    assert.equal(await readFile(join(dir, 'gmlog/status'), 'utf8'), 'FINISHING\n');
    assert.equal(await readFile(join(dir, 'gmlog/diag'), 'utf8'), 'exitcode=3\n');
    assert.match(
      await readFile(join(dir, 'gmlog/local'), 'utf8'),
      new RegExp(`^globalid=${j.id}$[^]*^gmlog=gmlog$`, 'm'),
    );
    for (const f of await readdir(join(dir, 'gmlog')))
      assert.equal((await stat(join(dir, 'gmlog', f))).mode & 0o777, 0o600);
    // A later state change rewrites them: the latest lines are there.
    await control.append(j.id, 'errors', 'later line\n');
    await writeGmlog(src, { ...j, state: 'FINISHED' });
    assert.match(await readFile(join(dir, 'gmlog/errors'), 'utf8'), /later line\n$/);
    assert.equal(await readFile(join(dir, 'gmlog/status'), 'utf8'), 'FINISHED\n');
  });

  it('is made below the session for a nested name, and not at all without a name', async () => {
    const nested = await failedJob('logs/gm/');
    await writeGmlog(src, nested.j);
    assert.ok((await stat(join(nested.dir, 'logs/gm/errors'))).isFile());
    const none = await failedJob(undefined);
    await writeGmlog(src, none.j);
    assert.deepEqual(await readdir(none.dir), []);
  });

  it('copies the end of an errors file larger than the bound', async () => {
    const { j, dir } = await failedJob('gmlog');
    await control.append(j.id, 'errors', 'x'.repeat(MAX_GMLOG_FILE_BYTES) + 'LAST\n');
    await writeGmlog(src, j);
    const copy = await readFile(join(dir, 'gmlog/errors'), 'utf8');
    assert.equal(copy.length, MAX_GMLOG_FILE_BYTES);
    assert.ok(copy.endsWith('LAST\n'));
  });
});

describe('a job attacking its log directory', () => {
  it('a link named like the directory: refused, nothing written where it points', async () => {
    const { j, dir } = await failedJob('gmlog');
    const outside = await mkdtemp(join(work, 'outside-'));
    await symlink(outside, join(dir, 'gmlog'));
    await rejectsWith(writeGmlog(src, j), 'CE_ERR_SESSION_SYMLINK');
    assert.deepEqual(await readdir(outside), []);
  });

  it('a link on the way to a nested directory: refused', async () => {
    const { j, dir } = await failedJob('logs/gm');
    const outside = await mkdtemp(join(work, 'outside-'));
    await symlink(outside, join(dir, 'logs'));
    await rejectsWith(writeGmlog(src, j), 'CE_ERR_SESSION_SYMLINK');
    assert.deepEqual(await readdir(outside), []);
  });

  it('a link named errors to a file outside: the link is replaced, its target untouched', async () => {
    const { j, dir } = await failedJob('gmlog');
    const target = join(work, `victim-${n}`);
    await writeFile(target, 'precious\n');
    await mkdir(join(dir, 'gmlog'));
    await symlink(target, join(dir, 'gmlog/errors'));
    await writeGmlog(src, j);
    assert.equal(await readFile(target, 'utf8'), 'precious\n');
    assert.ok((await lstat(join(dir, 'gmlog/errors'))).isFile());
  });

  it('a hard link named errors to a file outside: its content is left alone', async () => {
    const { j, dir } = await failedJob('gmlog');
    const target = join(work, `victim-${n}`);
    await writeFile(target, 'precious\n');
    await mkdir(join(dir, 'gmlog'));
    await link(target, join(dir, 'gmlog/errors'));
    await writeGmlog(src, j);
    assert.equal(await readFile(target, 'utf8'), 'precious\n');
    assert.equal((await stat(target)).nlink, 1, 'the job keeps no name for the file outside');
  });

  it('a FIFO named errors: the write does not wait for a reader', async () => {
    const { j, dir } = await failedJob('gmlog');
    await mkdir(join(dir, 'gmlog'));
    execFileSync('mkfifo', [join(dir, 'gmlog/errors')]);
    await writeGmlog(src, j);
    assert.ok((await lstat(join(dir, 'gmlog/errors'))).isFile());
  });

  it('a huge file named errors: replaced, never read', async () => {
    const { j, dir } = await failedJob('gmlog');
    await mkdir(join(dir, 'gmlog'));
    await writeFile(join(dir, 'gmlog/errors'), '');
    await truncate(join(dir, 'gmlog/errors'), 64 * 1024 ** 3); // sparse: takes no space
    await writeGmlog(src, j);
    assert.ok((await stat(join(dir, 'gmlog/errors'))).size < MAX_GMLOG_FILE_BYTES);
  });

  it('a file where the directory goes, or a directory named errors: refused, left as they are', async () => {
    const file = await failedJob('gmlog');
    await writeFile(join(file.dir, 'gmlog'), 'mine\n');
    await rejectsWith(writeGmlog(src, file.j), 'CE_ERR_SESSION_PARENT_NOT_DIRECTORY');
    assert.equal(await readFile(join(file.dir, 'gmlog'), 'utf8'), 'mine\n');
    const sub = await failedJob('gmlog');
    await mkdir(join(sub.dir, 'gmlog/errors'), { recursive: true });
    await writeFile(join(sub.dir, 'gmlog/errors/keep'), 'mine\n');
    await rejectsWith(writeGmlog(src, sub.j), 'CE_ERR_SESSION_BUSY');
    assert.equal(await readFile(join(sub.dir, 'gmlog/errors/keep'), 'utf8'), 'mine\n');
    assert.deepEqual(
      (await readdir(join(sub.dir, 'gmlog'))).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file is left behind',
    );
  });
});

describe('under a local account', { skip: skipUnlessRoot('the log directory of a mapped job') }, () => {
  before(() => assertRoot());
  after(() => removeAccounts());

  it("the directory and its files are the job's account's", async () => {
    assert.ok(isRoot);
    const acct = createAccount();
    const { j, dir } = await failedJob('logs/gm', { uid: acct.uid, gid: acct.gid });
    await writeGmlog(src, j);
    for (const p of ['logs', 'logs/gm', 'logs/gm/errors', 'logs/gm/local', 'logs/gm/failed']) {
      const s = await lstat(join(dir, p));
      assert.equal(s.uid, acct.uid, p);
      assert.equal(s.gid, acct.gid, p);
    }
  });
});
