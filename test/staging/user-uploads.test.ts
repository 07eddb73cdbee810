// Inputs the client uploads (no source): completion, size rules, checksums, timeout.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdir, stat, writeFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import type { FileResult, StageInFile, UploadWatch } from '../../src/staging/types.js';
import { never, stagingConfig, tempDir } from './helpers/fixtures.js';
import { createHasher } from '../../src/staging/checksum.js';

type T = Parameters<typeof tempDir>[0];

async function setup(t: T, wait = 5, pollSeconds = 0.05) {
  const root = await tempDir(t);
  const sessionDir = join(root, 'session');
  await mkdir(sessionDir);
  const stager = new Stager({
    config: stagingConfig({
      cache: { enabled: false },
      userUploadWaitSeconds: wait,
      userUploadPollSeconds: pollSeconds,
    }),
    credentials: anonymousCredentials,
  });
  const run = (files: StageInFile[], uploads?: UploadWatch, preparingSince?: Date) =>
    stager.stageIn(
      {
        id: 'j',
        owner: 'o',
        sessionDir,
        files,
        ...(uploads === undefined ? {} : { uploads }),
        ...(preparingSince === undefined ? {} : { preparingSince }),
      },
      never,
    );
  return { sessionDir, run, stager };
}

/** An upload watch like the sessions code provides: a set of completed paths and a change event. */
function watch() {
  const done = new Set<string>();
  let wake: () => void = () => undefined;
  const w: UploadWatch & { complete(p: string): void; asked: string[] } = {
    asked: [],
    isUploaded: (p) => {
      w.asked.push(p);
      return done.has(p);
    },
    changed: (signal) =>
      new Promise<void>((resolve) => {
        wake = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    complete: (p) => {
      done.add(p);
      wake();
    },
  };
  return w;
}

const user = (name: string, extra: Partial<StageInFile> = {}): StageInFile => ({ name, executable: false, ...extra });

describe('stage-in: files uploaded by the client', () => {
  it('waits until the upload is recorded complete, then sets the executable bit', async (t) => {
    const { sessionDir, run } = await setup(t);
    const w = watch();
    const p = run([user('/bin/run.sh', { executable: true })], w);
    await new Promise((r) => setTimeout(r, 100));
    await mkdir(join(sessionDir, 'bin'));
    await writeFile(join(sessionDir, 'bin/run.sh'), '#!/bin/sh\n');
    w.complete('/bin/run.sh');
    const r = await p;
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(
      r.files.map((f) => [f.kind, f.ok, f.bytes]),
      [['user', true, 10]],
    );
    assert.ok(
      w.asked.every((a) => a === '/bin/run.sh'),
      'asked with the input_status form of the path',
    );
    assert.equal((await stat(join(sessionDir, 'bin/run.sh'))).mode & 0o111, 0o111);
    assert.deepEqual(r.control.inputStatus, [], 'uploads are recorded by the sessions code, not here');
  });

  it('an upload that completes while the file is looked at is taken, never "recorded but nothing found"', async (t) => {
    // The sessions code renames the file into place, then records it complete; a look at
    // the file before that rename and a question about the record after it used to fail
    // the job ("Expected file. Nothing found.", seen in the soak run under load).
    const { sessionDir, run } = await setup(t);
    let done = false;
    const w: UploadWatch = {
      isUploaded: async () => {
        if (!done) {
          done = true;
          await writeFile(join(sessionDir, 'in.dat'), 'uploaded'); // the PUT completes now
        }
        return done;
      },
      changed: () => new Promise<void>(() => undefined),
    };
    const r = await run([user('in.dat')], w);
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(
      r.files.map((f) => [f.ok, f.bytes]),
      [[true, 8]],
    );
  });

  it('an upload that completes between a look and the wait for the next event is not missed', async (t) => {
    // The look asks for the record just before the PUT completes; the completion's event
    // then fires before the wait for events begins. With upload events the files are polled
    // only once a minute: the event must end the wait, not the poll (before: 60 s).
    const { sessionDir, run } = await setup(t, 120);
    const waiters = new Set<() => void>();
    let recorded = false;
    const w: UploadWatch = {
      isUploaded: () => {
        if (recorded) return true;
        // Answered "not yet"; the PUT completes now, and its event wakes whoever waits.
        writeFileSync(join(sessionDir, 'late.dat'), 'late');
        recorded = true;
        for (const wake of [...waiters]) wake();
        return false;
      },
      changed: (signal) =>
        new Promise<void>((resolve) => {
          const wake = (): void => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          signal.addEventListener('abort', wake, { once: true });
        }),
    };
    const t0 = Date.now();
    const r = await run([user('late.dat')], w);
    assert.equal(r.ok, true, r.failureReason);
    assert.ok(Date.now() - t0 < 10_000, `taken after ${Date.now() - t0} ms: the event was missed`);
  });

  it('a file declared with a size is done when it reaches that size', async (t) => {
    const { sessionDir, run } = await setup(t);
    await writeFile(join(sessionDir, 'big.dat'), Buffer.alloc(500));
    const p = run([user('big.dat', { size: 1000 })], watch());
    await new Promise((r) => setTimeout(r, 150));
    await writeFile(join(sessionDir, 'big.dat'), Buffer.alloc(1000));
    const r = await p;
    assert.equal(r.ok, true, r.failureReason);
  });

  it('a matching checksum is accepted', async (t) => {
    const { sessionDir, run } = await setup(t);
    await writeFile(join(sessionDir, 'c'), 'content');
    const h = createHasher('cksum');
    h.update(Buffer.from('content'));
    const r = await run([user('c', { size: 7, checksum: String(Number.parseInt(h.digest(), 16)) })]);
    assert.equal(r.ok, true, r.failureReason);
  });

  it("times out with A-REX's reason, measured from entering PREPARING", async (t) => {
    const { run } = await setup(t, 1);
    const r = await run([user('never.dat')], watch(), new Date(Date.now() - 900));
    assert.equal(r.ok, false);
    assert.equal(r.failureReason, 'User file: /never.dat - Timeout waiting');
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_USER_FILE_TIMEOUT');
  });

  it('a file bigger than specified fails at once', async (t) => {
    const { sessionDir, run } = await setup(t, 60);
    await writeFile(join(sessionDir, 'big.dat'), Buffer.alloc(1001));
    const r = await run([user('/big.dat', { size: 1000 })]);
    assert.equal(r.failureReason, 'User file: /big.dat - Delivered file is bigger than specified.');
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_USER_FILE_INVALID');
  });

  it('a directory where a file is expected fails', async (t) => {
    const { sessionDir, run } = await setup(t, 60);
    await mkdir(join(sessionDir, 'd'));
    const w = watch();
    w.complete('/d');
    const r = await run([user('d')], w);
    assert.equal(r.failureReason, 'User file: /d - Expected file. Directory found.');
  });

  it('a symbolic link where a file is expected fails', async (t) => {
    const { sessionDir, run } = await setup(t, 60);
    await symlink('/etc/hostname', join(sessionDir, 'l'));
    const w = watch();
    w.complete('/l');
    const r = await run([user('l')], w);
    assert.equal(r.failureReason, 'User file: /l - Expected file. Symbolic link found.');
  });

  it('a wrong checksum fails', async (t) => {
    const { sessionDir, run } = await setup(t, 60);
    await writeFile(join(sessionDir, 'c'), 'content');
    const r = await run([user('c', { size: 7, checksum: 'md5:00000000000000000000000000000000' })]);
    assert.equal(r.failureReason, 'User file: /c - Delivered file has a wrong checksum.');
  });

  it('a recorded upload whose file is gone fails', async (t) => {
    const { run } = await setup(t, 60);
    const w = watch();
    w.complete('/gone');
    const r = await run([user('gone')], w);
    assert.equal(r.failureReason, 'User file: /gone - Expected file. Nothing found.');
  });
});

describe('stage-in: one look at client uploads (lookOnce)', () => {
  async function setupOnce(t: T, wait = 5) {
    const { sessionDir, stager } = await setup(t, wait, 1);
    const look = (
      files: StageInFile[],
      w: UploadWatch,
      o: { judged?: ReadonlyMap<number, FileResult>; since?: Date } = {},
    ) =>
      stager.stageIn(
        {
          id: 'j',
          owner: 'o',
          sessionDir,
          files,
          uploads: w,
          lookOnce: true,
          ...(o.judged === undefined ? {} : { judged: o.judged }),
          ...(o.since === undefined ? {} : { preparingSince: o.since }),
        },
        never,
      );
    return { sessionDir, look };
  }

  it('returns at once with the time of the next look while a file is missing, and judges a done file only once', async (t) => {
    const { sessionDir, look } = await setupOnce(t);
    const w = watch();
    await writeFile(join(sessionDir, 'a'), 'aaa');
    w.complete('/a');
    const before = Date.now();
    const r1 = await look([user('a'), user('b')], w);
    assert.equal(r1.waiting !== undefined, true, 'still waiting for b');
    // The poll is only a backstop when uploads are events: at least a minute, bounded by the wait.
    assert.ok(r1.waiting!.checkAt >= before + 5000 - 50 && r1.waiting!.checkAt <= Date.now() + 5000);
    assert.deepEqual([...r1.waiting!.judged.keys()], [0]);
    await writeFile(join(sessionDir, 'b'), 'bb');
    w.complete('/b');
    w.asked.length = 0;
    const r2 = await look([user('a'), user('b')], w, { judged: r1.waiting!.judged });
    assert.equal(r2.waiting, undefined);
    assert.equal(r2.ok, true, r2.failureReason);
    assert.deepEqual(
      r2.files.map((f) => [f.name, f.ok, f.bytes]),
      [
        ['a', true, 3],
        ['b', true, 2],
      ],
    );
    assert.deepEqual(w.asked, ['/b'], 'a was not judged again');
  });

  it('the look after the wait has run out fails the missing file as the wait did', async (t) => {
    const { look } = await setupOnce(t, 1);
    const r = await look([user('never.dat')], watch(), { since: new Date(Date.now() - 1000) });
    assert.equal(r.waiting, undefined);
    assert.equal(r.failureReason, 'User file: /never.dat - Timeout waiting');
  });
});
