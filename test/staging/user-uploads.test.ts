// Inputs the client uploads (no source): completion, size rules, checksums, timeout.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat, writeFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import type { StageInFile, UploadWatch } from '../../src/staging/types.js';
import { never, stagingConfig, tempDir } from './helpers/fixtures.js';
import { createHasher } from '../../src/staging/checksum.js';

type T = Parameters<typeof tempDir>[0];

async function setup(t: T, wait = 5) {
  const root = await tempDir(t);
  const sessionDir = join(root, 'session');
  await mkdir(sessionDir);
  const stager = new Stager({
    config: stagingConfig({ cache: { enabled: false }, userUploadWaitSeconds: wait, userUploadPollSeconds: 0.05 }),
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
  return { sessionDir, run };
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
