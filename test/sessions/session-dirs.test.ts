// The sessions folder on real files: identities, refusal of replaced directories,
// link-safe removal of what a job made of its directory, and the crash-debris sweep.
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionDirs } from '../../src/sessions/session-dirs.js';
import { sweepUploadDebris } from '../../src/sessions/session-debris.js';
import { isCeError } from '../../src/errors/ce-error.js';

const code = (c: string) => (e: unknown) => isCeError(e) && e.code === c;
const gone = (p: string): boolean => {
  try {
    lstatSync(p);
    return false;
  } catch {
    return true;
  }
};

describe('SessionDirs', () => {
  let root: string;
  let folder: string;
  let outside: string;
  let dirs: SessionDirs;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-sessiondirs-'));
  });
  beforeEach(async () => {
    await dirs?.close();
    await rm(join(root, 'f'), { recursive: true, force: true });
    await rm(join(root, 'outside'), { recursive: true, force: true });
    folder = join(root, 'f');
    outside = join(root, 'outside');
    await mkdir(folder);
    await mkdir(outside);
    await writeFile(join(outside, 'precious'), 'keep me');
    dirs = await SessionDirs.open(folder);
  });
  after(async () => {
    await dirs.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a made directory is opened and used by its identity', async () => {
    const ident = dirs.createSync('job1');
    assert.match(ident, /^\d+:\d+$/);
    await writeFile(join(folder, 'job1', 'a'), 'A');
    assert.equal(await dirs.withRoot('job1', ident, async (d) => readFileSync(join(d, 'a'), 'utf8')), 'A');
    await dirs.check('job1', ident);
  });

  it('a link in its place is refused, with or without a recorded identity', async () => {
    const ident = dirs.createSync('job1');
    await rename(join(folder, 'job1'), join(folder, 'job1.moved'));
    await symlink(outside, join(folder, 'job1'));
    await assert.rejects(
      dirs.withRoot('job1', ident, async () => 'x'),
      code('CE_ERR_SESSION_REPLACED'),
    );
    await assert.rejects(
      dirs.withRoot('job1', null, async () => 'x'),
      code('CE_ERR_SESSION_REPLACED'),
    );
    await assert.rejects(dirs.check('job1', ident), code('CE_ERR_SESSION_REPLACED'));
  });

  it('another directory in its place is refused; without a recorded identity it cannot be told', async () => {
    const ident = dirs.createSync('job1');
    await rename(join(folder, 'job1'), join(folder, 'job1.moved'));
    await mkdir(join(folder, 'job1'));
    await assert.rejects(
      dirs.withRoot('job1', ident, async () => 'x'),
      code('CE_ERR_SESSION_REPLACED'),
    );
    assert.equal(await dirs.withRoot('job1', null, async () => 'legacy'), 'legacy');
  });

  it('a missing directory is not found; a file in its place is replaced', async () => {
    await assert.rejects(
      dirs.withRoot('nojob', null, async () => 'x'),
      code('CE_ERR_SESSION_NOT_FOUND'),
    );
    await writeFile(join(folder, 'filejob'), 'x');
    await assert.rejects(
      dirs.withRoot('filejob', null, async () => 'x'),
      code('CE_ERR_SESSION_REPLACED'),
    );
  });

  it('the folder handle survives a rename of the folder path', async () => {
    const ident = dirs.createSync('job1');
    await writeFile(join(folder, 'job1', 'a'), 'A');
    await rename(folder, `${folder}.away`);
    await mkdir(folder);
    await symlink(outside, join(folder, 'job1'));
    assert.equal(await dirs.withRoot('job1', ident, async (d) => readFileSync(join(d, 'a'), 'utf8')), 'A');
    await dirs.close();
    await rm(folder, { recursive: true });
    await rename(`${folder}.away`, folder);
    dirs = await SessionDirs.open(folder);
  });

  it('remove: the own directory goes, links inside are not followed', async () => {
    const ident = dirs.createSync('job1');
    await mkdir(join(folder, 'job1', 'sub'));
    await symlink(outside, join(folder, 'job1', 'sub', 'out'));
    await symlink(join(outside, 'precious'), join(folder, 'job1', 'p'));
    const r = await dirs.remove('job1', ident);
    assert.equal(r.found, 'own');
    assert.ok(gone(join(folder, 'job1')));
    assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'keep me');
  });

  it('remove: a link in its place is unlinked and the renamed directory found by identity', async () => {
    const ident = dirs.createSync('job1');
    await writeFile(join(folder, 'job1', 'x'), 'x');
    await rename(join(folder, 'job1'), join(folder, 'job1.moved'));
    await symlink(outside, join(folder, 'job1'));
    const r = await dirs.remove('job1', ident);
    assert.equal(r.found, 'link');
    assert.deepEqual(r.leftovers, ['job1.moved']);
    assert.deepEqual(readdirSync(folder), []);
    assert.deepEqual(readdirSync(outside), ['precious']);
  });

  it("remove: another job's directory renamed to <id>.x or put in its place is never touched", async () => {
    const mine = dirs.createSync('job1');
    dirs.createSync('job2');
    await writeFile(join(folder, 'job2', 'data'), 'job2 data');
    // job1 moves itself away to an unrelated name, puts job2's directory in its place
    await rename(join(folder, 'job1'), join(folder, 'elsewhere'));
    await rename(join(folder, 'job2'), join(folder, 'job1'));
    const r = await dirs.remove('job1', mine);
    assert.equal(r.found, 'foreign');
    assert.equal(r.keptForeign, true);
    assert.equal(readFileSync(join(folder, 'job1', 'data'), 'utf8'), 'job2 data');
    // and job2's directory renamed to <job1>.x: not job1's identity, kept
    await rename(join(folder, 'job1'), join(folder, 'job1.x'));
    const r2 = await dirs.remove('job1', mine);
    assert.equal(r2.found, 'none');
    assert.deepEqual(r2.leftovers, []);
    assert.equal(readFileSync(join(folder, 'job1.x', 'data'), 'utf8'), 'job2 data');
  });

  it("remove without the search (a wiped job's final clean) does not read the folder for renamed directories", async () => {
    const ident = dirs.createSync('job1');
    await rename(join(folder, 'job1'), join(folder, 'job1.moved'));
    const r = await dirs.remove('job1', ident, { findRenamed: false });
    assert.deepEqual(r, { found: 'none', leftovers: [], keptForeign: false });
    assert.ok(!gone(join(folder, 'job1.moved')));
    assert.deepEqual((await dirs.remove('job1', ident)).leftovers, ['job1.moved']);
  });

  it('remove of a job without a recorded identity: link unlinked, directory removed', async () => {
    await symlink(outside, join(folder, 'old1'));
    assert.equal((await dirs.remove('old1', null)).found, 'link');
    assert.ok(gone(join(folder, 'old1')));
    assert.deepEqual(readdirSync(outside), ['precious']);
    dirs.createSync('old2');
    assert.equal((await dirs.remove('old2', null)).found, 'own');
    assert.ok(gone(join(folder, 'old2')));
    assert.equal((await dirs.remove('old3', null)).found, 'none');
  });

  it('the free space is read through the folder handle', () => {
    const s = dirs.space();
    assert.ok(s.totalBytes > 0 && s.freeBytes >= 0);
  });
});

describe('upload debris sweep', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-debris-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('removes old temporaries at any depth; keeps fresh ones, other files and everything behind links', async () => {
    const folder = join(root, 'sessions');
    const outside = join(root, 'outside');
    await mkdir(join(folder, 's1', 'a', 'b'), { recursive: true });
    await mkdir(join(folder, 's2'), { recursive: true });
    await mkdir(outside);
    const old = new Date(Date.now() - 3600_000);
    for (const p of [
      join(folder, 's1', '.ceres-upload.1'),
      join(folder, 's1', 'a', 'b', '.ceres-upload.2'),
      join(outside, '.ceres-upload.3'),
    ]) {
      await writeFile(p, 'partial');
      await utimes(p, old, old);
    }
    await writeFile(join(folder, 's2', '.ceres-upload.fresh'), 'in progress');
    await writeFile(join(folder, 's2', 'done'), 'done');
    await symlink(outside, join(folder, 's2', 'link'));
    await symlink(outside, join(folder, 's3'));
    const h = await (await import('node:fs/promises')).open(folder, 'r');
    try {
      const r = await sweepUploadDebris(h, { before: Date.now() - 60_000 });
      assert.equal(r.removed, 2);
      assert.equal(r.sessions, 3);
    } finally {
      await h.close();
    }
    assert.ok(!existsSync(join(folder, 's1', '.ceres-upload.1')));
    assert.ok(!existsSync(join(folder, 's1', 'a', 'b', '.ceres-upload.2')));
    assert.ok(existsSync(join(folder, 's2', '.ceres-upload.fresh')));
    assert.ok(existsSync(join(folder, 's2', 'done')));
    assert.ok(existsSync(join(outside, '.ceres-upload.3')));
  });

  it('stops at the depth bound and when aborted', async () => {
    const folder = join(root, 'deep');
    await mkdir(join(folder, 's', 'l1', 'l2'), { recursive: true });
    const old = new Date(Date.now() - 3600_000);
    const p = join(folder, 's', 'l1', 'l2', '.ceres-upload.x');
    await writeFile(p, 'x');
    await utimes(p, old, old);
    const h = await (await import('node:fs/promises')).open(folder, 'r');
    try {
      assert.equal((await sweepUploadDebris(h, { before: Date.now(), maxDepth: 1 })).removed, 0);
      const ac = new AbortController();
      ac.abort();
      assert.equal((await sweepUploadDebris(h, { before: Date.now(), signal: ac.signal })).removed, 0);
      assert.equal((await sweepUploadDebris(h, { before: Date.now() })).removed, 1);
    } finally {
      await h.close();
    }
  });
});
