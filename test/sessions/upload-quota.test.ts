import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCeError } from '../../src/errors/ce-error.js';
import { UploadQuota } from '../../src/sessions/upload-quota.js';

const refused = (f: () => unknown): boolean => {
  try {
    f();
    return false;
  } catch (e) {
    assert.ok(isCeError(e) && e.code === 'CE_ERR_SESSION_JOB_QUOTA', String(e));
    return true;
  }
};

describe('UploadQuota', () => {
  it('uploads in flight count: two concurrent writes cannot both pass the quota', () => {
    const q = new UploadQuota(100);
    const a = q.begin('j', '/s', 'a', 0);
    const b = q.begin('j', '/s', 'b', 0);
    a.grow(60);
    assert.ok(refused(() => b.grow(41)));
    b.grow(40);
    assert.equal(q.usage('j'), 100);
    a.release();
    assert.equal(q.usage('j'), 40);
    b.commit(40);
    assert.equal(q.usage('j'), 40);
  });

  it('a reservation ends once: commit after release (or twice) changes nothing', () => {
    const q = new UploadQuota(100);
    const a = q.begin('j', '/s', 'a', 10);
    a.commit(10);
    a.commit(90);
    a.release();
    a.grow(1000);
    assert.equal(q.usage('j'), 10);
  });

  it('growth is measured against the file\'s current extent, so rewriting a range costs nothing', () => {
    const q = new UploadQuota(100);
    q.begin('j', '/s', 'f', 80).commit(80);
    const again = q.begin('j', '/s', 'f', 80);
    assert.equal(q.usage('j'), 80);
    again.commit(80);
    assert.ok(refused(() => q.begin('j', '/s', 'f', 101)));
    assert.ok(refused(() => q.begin('j', '/s', 'g', 21)));
  });

  it('forgets deleted files and directories, and sweeps jobs whose session directory is gone', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ceres-quota-'));
    try {
      const q = new UploadQuota(1000);
      for (const p of ['d/a', 'd/b', 'dx', 'e']) q.begin('live', root, p, 10).commit(10);
      q.forget('live', 'd', true);
      assert.equal(q.usage('live'), 20, 'd/a and d/b gone, dx (not below d/) kept');
      q.begin('gone', join(root, 'missing'), 'x', 10).commit(10);
      await q.sweep();
      assert.equal(q.usage('gone'), 0);
      assert.equal(q.usage('live'), 20);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
