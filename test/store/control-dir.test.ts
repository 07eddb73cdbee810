// The control directory makes a job's directory when a write finds it missing
// (src/store/control-dir.ts): on the job's first write, and again after the directory was
// removed behind the service's back (an operator's cleanup, a restored backup). A cache
// of the directories made would have the second write fail with ENOENT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlDir } from '../../src/store/control-dir.js';

async function withDir(fn: (c: ControlDir, root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'ceres-control-'));
  try {
    await fn(new ControlDir(root), root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const ID = 'abcdefghijklmnopqrstuvwxyz';

test('control dir: the first append and the first write make the job directory, mode 0700', async () => {
  await withDir(async (c) => {
    await c.append(ID, 'errors', 'one\n');
    assert.equal((await stat(c.jobDir(ID))).mode & 0o777, 0o700);
    assert.equal(await readFile(c.file(ID, 'errors'), 'utf8'), 'one\n');
    await c.write('zyxwvutsrqponmlkjihgfedcba', 'status', 'x');
    assert.equal(await readFile(c.file('zyxwvutsrqponmlkjihgfedcba', 'status'), 'utf8'), 'x');
  });
});

test('control dir: a job directory removed behind the service is made again by the next append and write', async () => {
  await withDir(async (c) => {
    await c.append(ID, 'errors', 'one\n');
    await rm(c.jobDir(ID), { recursive: true });
    await c.append(ID, 'errors', 'two\n');
    assert.equal(await readFile(c.file(ID, 'errors'), 'utf8'), 'two\n');
    await rm(c.jobDir(ID), { recursive: true });
    await c.write(ID, 'local', 'y');
    assert.equal(await readFile(c.file(ID, 'local'), 'utf8'), 'y');
  });
});

test('control dir: a failure other than a missing directory is not retried and reaches the caller', async () => {
  await withDir(async (c) => {
    // The job's directory is a file: ENOTDIR, which no mkdir mends.
    await mkdir(join(c.jobDir(ID), '..'), { recursive: true });
    await writeFile(c.jobDir(ID), 'not a directory');
    await assert.rejects(c.append(ID, 'errors', 'x\n'), { code: 'ENOTDIR' });
    await assert.rejects(c.write(ID, 'local', 'x'), { code: 'ENOTDIR' });
    assert.equal(await readFile(c.jobDir(ID), 'utf8'), 'not a directory');
  });
});
