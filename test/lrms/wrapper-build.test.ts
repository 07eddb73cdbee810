// The C job wrapper's build: linked statically where the C library allows it (a wrapper
// starts with every job, and the dynamic loader's work was paid per job), dynamically
// when a static link fails, and the sh wrapper when no C build works at all.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureWrapper } from '../../src/lrms/core/wrapper-build.js';
import { isCeError } from '../../src/errors/ce-error.js';

/** Whether an ELF executable asks for a program interpreter (is dynamically linked). */
function hasInterpreter(path: string): boolean {
  const b = readFileSync(path);
  assert.equal(b.subarray(0, 4).toString('latin1'), '\x7fELF', `${path} is not an ELF file`);
  assert.equal(b[4], 2, 'a 64-bit ELF file');
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3 /* PT_INTERP */) return true;
  return false;
}

/** A compiler that refuses `-static` and otherwise runs cc. */
async function noStaticCc(dir: string): Promise<string> {
  const path = join(dir, 'cc-no-static');
  await writeFile(
    path,
    '#!/bin/sh\nfor a in "$@"; do [ "$a" = -static ] && { echo "cannot find -lc" >&2; exit 1; }; done\nexec cc "$@"\n',
  );
  await chmod(path, 0o755);
  return path;
}

describe('job wrapper build', () => {
  let root = '';
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-wrapper-build-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('links the C wrapper statically: no program interpreter', async () => {
    const w = await ensureWrapper(join(root, 'static'), 'c', 'cc');
    assert.equal(w.kind, 'c');
    assert.match(w.path, /-static$/);
    assert.equal(hasInterpreter(w.path), false);
  });

  it('links it dynamically when the static link fails', async () => {
    const w = await ensureWrapper(join(root, 'dynamic'), 'c', await noStaticCc(root));
    assert.equal(w.kind, 'c');
    assert.doesNotMatch(w.path, /-static$/);
    assert.equal(hasInterpreter(w.path), true);
  });

  it('without a working compiler: the sh wrapper under auto (saying why), an error under c', async () => {
    const why: string[] = [];
    const w = await ensureWrapper(join(root, 'none'), 'auto', join(root, 'no-such-cc'), (m) => why.push(m));
    assert.equal(w.kind, 'sh');
    assert.equal(why.length, 1);
    await assert.rejects(ensureWrapper(join(root, 'none-c'), 'c', join(root, 'no-such-cc')), (e) => isCeError(e));
  });
});
