// A directory removed while its listing is read (src/sessions/dir-table.ts): the listing
// is 404 CE_ERR_SESSION_NOT_FOUND, not the part read before the removal passed off as the
// whole. The removal happens, deterministically, between the reading of the names and
// their lstat (at the first check for a client gone).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDirTable } from '../../src/sessions/dir-table.js';
import { DIR_FLAGS } from '../../src/fs/safe-fs.js';
import { isCeError } from '../../src/errors/ce-error.js';

describe('a listing of a directory removed while it is read', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-dirtable-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  const listed = async (removeMidway: boolean) => {
    const d = join(root, removeMidway ? 'removed' : 'kept');
    await mkdir(d);
    for (let i = 0; i < 100; i++) await writeFile(join(d, `f${i}`), 'x');
    const h = await open(d, DIR_FLAGS);
    let checks = 0;
    try {
      return await readDirTable(h, {
        maxEntries: 1000,
        gone: () => {
          if (removeMidway && checks++ === 1) rmSync(d, { recursive: true });
          return false;
        },
      });
    } finally {
      await h.close();
    }
  };

  it('is not found, not a partial listing', async () => {
    await assert.rejects(listed(true), (e) => isCeError(e) && e.code === 'CE_ERR_SESSION_NOT_FOUND');
  });

  it('left alone, the same directory lists whole', async () => {
    assert.equal((await listed(false)).names.length, 100);
  });
});
