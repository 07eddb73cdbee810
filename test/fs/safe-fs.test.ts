// The one implementation of file access inside session directories (src/fs/safe-fs.ts),
// used by the REST session files and by data staging alike.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  listFiles,
  lstatPath,
  openDirChain,
  openForRead,
  removeEntry,
  MAX_REMOVE_DEPTH,
} from '../../src/fs/safe-fs.js';
import { readDirTable } from '../../src/sessions/dir-table.js';
import { isCeError } from '../../src/errors/ce-error.js';

const code = (c: string) => (e: unknown) => isCeError(e) && e.code === c;

describe('symlink-safe session file access', () => {
  let root: string;
  let session: string;
  let outside: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-safefs-'));
    session = join(root, 'session');
    outside = join(root, 'outside');
    await mkdir(join(session, 'sub', 'deep'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(outside, 'secret'), 'top secret');
    await writeFile(join(session, 'a.txt'), 'hello');
    await writeFile(join(session, 'sub', 'b.txt'), 'bb');
    await symlink(join(outside, 'secret'), join(session, 'link-file'));
    await symlink(outside, join(session, 'link-dir'));
    await symlink('a.txt', join(session, 'link-inside'));
    await symlink(outside, join(session, 'sub', 'up'));
    execFileSync('mkfifo', [join(session, 'fifo')]);
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('opens files and directories', async () => {
    const f = await openForRead(session, ['a.txt']);
    assert.equal(f.kind, 'file');
    assert.equal((await f.handle.readFile()).toString(), 'hello');
    await f.handle.close();
    const d = await openForRead(session, ['sub']);
    assert.equal(d.kind, 'dir');
    await d.handle.close();
    const r = await openForRead(session, []);
    assert.equal(r.kind, 'dir');
    await r.handle.close();
  });

  it('refuses a final symlink to a file outside, inside, or to a directory (403)', async () => {
    for (const n of ['link-file', 'link-inside', 'link-dir']) {
      await assert.rejects(openForRead(session, [n]), code('CE_ERR_SESSION_SYMLINK'), n);
    }
  });

  it('refuses a symlink as an intermediate component (no traversal through links)', async () => {
    await assert.rejects(openForRead(session, ['link-dir', 'secret']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(openForRead(session, ['sub', 'up', 'secret']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(openDirChain(session, ['link-dir'], true), code('CE_ERR_SESSION_SYMLINK'));
  });

  it('does not create anything through a link, even when creating parents', async () => {
    await assert.rejects(openDirChain(session, ['link-dir', 'newdir'], true), code('CE_ERR_SESSION_SYMLINK'));
    assert.deepEqual(await readdir(outside), ['secret']);
  });

  it('missing paths are 404; a file used as a directory is 404 to read, 409 to create under', async () => {
    await assert.rejects(openForRead(session, ['nope']), code('CE_ERR_SESSION_NOT_FOUND'));
    await assert.rejects(openForRead(session, ['nope', 'x']), code('CE_ERR_SESSION_NOT_FOUND'));
    await assert.rejects(openForRead(session, ['a.txt', 'x']), code('CE_ERR_SESSION_NOT_FOUND'));
    await assert.rejects(openDirChain(session, ['a.txt', 'x'], true), code('CE_ERR_SESSION_PARENT_NOT_DIRECTORY'));
    await assert.rejects(openForRead(join(root, 'no-session'), []), code('CE_ERR_SESSION_NOT_FOUND'));
  });

  it('a FIFO is not opened for reading without blocking and is reported missing', async () => {
    await assert.rejects(openForRead(session, ['fifo']), code('CE_ERR_SESSION_NOT_FOUND'));
  });

  it('creates missing parents with mode 0700', async () => {
    const h = await openDirChain(session, ['made', 'here'], true);
    await h.close();
    assert.equal((await stat(join(session, 'made', 'here'))).mode & 0o777, 0o700);
    assert.equal((await stat(join(session, 'made'))).mode & 0o777, 0o700);
  });

  it('lists files and directories sorted, without links, FIFOs or names no request could address', async () => {
    await writeFile(join(session, 'back\\slash'), 'x');
    await writeFile(join(session, 'line\nbreak'), 'x');
    await writeFile(Buffer.concat([Buffer.from(`${session}/bad-`), Buffer.from([0xff, 0xfe])]), 'x');
    await writeFile(join(session, '.ceres-upload.0123'), 'x');
    const d = await openForRead(session, []);
    const t = await readDirTable(d.handle, { maxEntries: 1000, gone: () => false });
    await d.handle.close();
    const names = t.names.map((n, i) => `${i < t.fileCount ? 'file' : 'dir'}:${n}`);
    assert.deepEqual(names, ['file:a.txt', 'dir:made', 'dir:sub']);
  });

  it('deleting a link removes the link, never its target', async () => {
    const dir = await openDirChain(session, []);
    assert.equal(await removeEntry(dir, 'link-file'), 'symlink');
    assert.equal(await removeEntry(dir, 'link-dir'), 'symlink');
    await dir.close();
    assert.equal(await readFile(join(outside, 'secret'), 'utf8'), 'top secret');
  });

  it('deleting a directory recursively never descends through links inside it', async () => {
    const dir = await openDirChain(session, []);
    assert.equal(await removeEntry(dir, 'sub'), 'dir');
    await dir.close();
    await assert.rejects(stat(join(session, 'sub')));
    assert.deepEqual(await readdir(outside), ['secret']);
    assert.equal(await readFile(join(outside, 'secret'), 'utf8'), 'top secret');
  });

  it('deleting what is missing is 404; a trailing slash on a file is 404', async () => {
    const dir = await openDirChain(session, []);
    await assert.rejects(removeEntry(dir, 'gone'), code('CE_ERR_SESSION_NOT_FOUND'));
    await assert.rejects(removeEntry(dir, 'a.txt', true), code('CE_ERR_SESSION_NOT_FOUND'));
    await dir.close();
    await stat(join(session, 'a.txt'));
  });

  it('gives up (409) on a tree deeper than the limit instead of recursing without end', async () => {
    const deep = Array.from({ length: MAX_REMOVE_DEPTH + 1 }, () => 'd');
    const h = await openDirChain(session, ['tall', ...deep], true);
    await h.close();
    const dir = await openDirChain(session, []);
    await assert.rejects(removeEntry(dir, 'tall'), code('CE_ERR_SESSION_TREE_TOO_DEEP'));
    await dir.close();
  });
});

describe('looking up and listing for data staging', () => {
  let root: string;
  let session: string;
  let outside: string;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-safefs-list-'));
    session = join(root, 'session');
    outside = join(root, 'outside');
    await mkdir(join(session, 'out', 'deeper', 'deepest'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(outside, 'secret'), 'top secret');
    await writeFile(join(session, 'top.txt'), 't');
    await writeFile(join(session, 'out', 'a'), 'a');
    await writeFile(join(session, 'out', 'deeper', 'b'), 'b');
    await writeFile(join(session, 'out', 'deeper', 'deepest', 'c'), 'c');
    await symlink(outside, join(session, 'out', 'to-outside'));
    await symlink(join(outside, 'secret'), join(session, 'out', 'secret-link'));
    await symlink(outside, join(session, 'linked-dir'));
    execFileSync('mkfifo', [join(session, 'out', 'fifo')]);
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('lstat of a file, a directory and the session directory itself', async () => {
    assert.equal((await lstatPath(session, ['top.txt']))?.isFile(), true);
    assert.equal((await lstatPath(session, ['out', 'deeper']))?.isDirectory(), true);
    assert.equal((await lstatPath(session, []))?.isDirectory(), true);
  });

  it('lstat of what is absent, or under a file, is undefined', async () => {
    assert.equal(await lstatPath(session, ['nothing']), undefined);
    assert.equal(await lstatPath(session, ['out', 'nothing', 'x']), undefined);
    assert.equal(await lstatPath(session, ['top.txt', 'x']), undefined);
  });

  it('lstat refuses a link as the last component or on the way (403)', async () => {
    await assert.rejects(lstatPath(session, ['linked-dir']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(lstatPath(session, ['out', 'secret-link']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(lstatPath(session, ['linked-dir', 'secret']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(lstatPath(session, ['out', 'to-outside', 'secret']), code('CE_ERR_SESSION_SYMLINK'));
  });

  it('lists the regular files of a tree at every depth, never through a link, without special files', async () => {
    assert.deepEqual((await listFiles(session, ['out'])).sort(), ['a', 'deeper/b', 'deeper/deepest/c']);
    assert.deepEqual((await listFiles(session, [])).sort(), [
      'out/a',
      'out/deeper/b',
      'out/deeper/deepest/c',
      'top.txt',
    ]);
  });

  it('listing a tree reached through a link is 403; a missing tree or a file, 404', async () => {
    await assert.rejects(listFiles(session, ['linked-dir']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(listFiles(session, ['out', 'to-outside']), code('CE_ERR_SESSION_SYMLINK'));
    await assert.rejects(listFiles(session, ['nothing']), code('CE_ERR_SESSION_NOT_FOUND'));
    await assert.rejects(listFiles(session, ['top.txt']), code('CE_ERR_SESSION_NOT_FOUND'));
  });

  it('gives up (409) on a tree deeper than the limit', async () => {
    const h = await openDirChain(session, ['tall', ...Array.from({ length: MAX_REMOVE_DEPTH + 1 }, () => 'd')], true);
    await h.close();
    await assert.rejects(listFiles(session, ['tall']), code('CE_ERR_SESSION_TREE_TOO_DEEP'));
  });
});
