// The one helper that replaces files atomically (src/fs/atomic-write.ts): readers see
// the old content or the new, permissions are as asked, and a failed write leaves
// neither a temporary file nor a changed target.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syncDir, writeFileAtomic } from '../../src/fs/atomic-write.js';

describe('atomic file replacement', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ceres-atomic-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('creates, then replaces, leaving nothing else in the directory', async () => {
    const f = join(dir, 'a');
    await writeFileAtomic(f, 'one');
    await writeFileAtomic(f, Buffer.from('two'), { durable: false });
    assert.equal(await readFile(f, 'utf8'), 'two');
    assert.deepEqual(await readdir(dir), ['a']);
  });

  it('readers racing the writes see one whole version or the other, never a mix or nothing', async () => {
    const f = join(dir, 'raced');
    const versions = ['x', 'y'].map((c) => c.repeat(256 * 1024));
    await writeFileAtomic(f, versions[0] as string);
    let done = false;
    const writer = (async () => {
      for (let i = 0; i < 40; i++) await writeFileAtomic(f, versions[i % 2] as string, { durable: i % 4 === 0 });
      done = true;
    })();
    let reads = 0;
    while (!done) {
      const text = await readFile(f, 'utf8');
      assert.ok(versions.includes(text), `a read saw ${text.length} bytes of a mix`);
      reads++;
    }
    await writer;
    assert.ok(reads > 0);
  });

  it('the mode is less the umask, or exactly as asked with exactMode', async () => {
    const old = process.umask(0o077);
    try {
      await writeFileAtomic(join(dir, 'masked'), 'm', { mode: 0o644 });
      await writeFileAtomic(join(dir, 'exact'), 'e', { mode: 0o644, exactMode: true });
    } finally {
      process.umask(old);
    }
    assert.equal((await stat(join(dir, 'masked'))).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, 'exact'))).mode & 0o777, 0o644);
  });

  it('a write that cannot complete leaves the target as it was and no temporary file', async () => {
    const sub = join(dir, 'fail');
    await mkdir(join(sub, 'target'), { recursive: true });
    await writeFile(join(sub, 'target', 'inside'), 'keep');
    // A directory in the target's place: the rename over it fails.
    await assert.rejects(writeFileAtomic(join(sub, 'target'), 'new'));
    assert.deepEqual(await readdir(sub), ['target']);
    assert.equal(await readFile(join(sub, 'target', 'inside'), 'utf8'), 'keep');
    await assert.rejects(writeFileAtomic(join(dir, 'missing-dir', 'f'), 'x'), { code: 'ENOENT' });
  });

  it('syncs a directory, and fails for one that is not there', async () => {
    await syncDir(dir);
    await assert.rejects(syncDir(join(dir, 'nope')), { code: 'ENOENT' });
  });
});
