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
    const q = new UploadQuota(100, () => true);
    const a = q.begin('j', 'a', 0);
    const b = q.begin('j', 'b', 0);
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
    const q = new UploadQuota(100, () => true);
    const a = q.begin('j', 'a', 10);
    a.commit(10);
    a.commit(90);
    a.release();
    a.grow(1000);
    assert.equal(q.usage('j'), 10);
  });

  it("growth is measured against the file's current extent, so rewriting a range costs nothing", () => {
    const q = new UploadQuota(100, () => true);
    q.begin('j', 'f', 80).commit(80);
    const again = q.begin('j', 'f', 80);
    assert.equal(q.usage('j'), 80);
    again.commit(80);
    assert.ok(refused(() => q.begin('j', 'f', 101)));
    assert.ok(refused(() => q.begin('j', 'g', 21)));
  });

  it('forgets deleted files and directories, and sweeps jobs that no longer exist', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ceres-quota-'));
    try {
      const q = new UploadQuota(1000, (id) => id !== 'gone');
      for (const p of ['d/a', 'd/b', 'dx', 'e']) q.begin('live', p, 10).commit(10);
      q.forget('live', 'd', true);
      assert.equal(q.usage('live'), 20, 'd/a and d/b gone, dx (not below d/) kept');
      q.begin('gone', 'x', 10).commit(10);
      q.sweep();
      assert.equal(q.usage('gone'), 0);
      assert.equal(q.usage('live'), 20);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('UploadQuota memory', () => {
  it('ledgers of cleaned jobs are dropped: it stays small however many jobs come and go', () => {
    const live = new Set<string>();
    const q = new UploadQuota(1000, (id) => live.has(id));
    for (let i = 0; i < 20_000; i++) {
      const id = `job${i}`;
      live.add(id);
      q.begin(id, 'in', 10).commit(10);
      live.delete(id); // cleaned
    }
    assert.ok(q.size <= 2048, `ledgers kept: ${q.size}`);
  });
});
