import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotAJobFileError, readJobFile } from '../../src/lrms/job-file.js';

function dir(t: { after: (fn: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'ceres-jobfile-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const refused = (re: RegExp) => (e: unknown) => e instanceof NotAJobFileError && re.test(e.message);

test('job files: a regular file is read; a missing one is undefined', async (t) => {
  const d = dir(t);
  writeFileSync(join(d, 'status'), 'exitcode=0\n');
  assert.equal(await readJobFile(join(d, 'status')), 'exitcode=0\n');
  assert.equal(await readJobFile(join(d, 'absent')), undefined);
  writeFileSync(join(d, 'exact'), 'x'.repeat(100));
  assert.equal(await readJobFile(join(d, 'exact'), 100), 'x'.repeat(100), 'exactly the limit is fine');
});

test('job files: a record larger than the first read buffer is read whole, up to the bound', async (t) => {
  const d = dir(t);
  // The reader starts with a small buffer and grows it: sizes around each step.
  for (const n of [4095, 4096, 4097, 16_385, 65_536]) {
    const text = Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    writeFileSync(join(d, `f${n}`), text);
    assert.equal(await readJobFile(join(d, `f${n}`)), text, `${n} bytes`);
  }
  writeFileSync(join(d, 'over'), 'x'.repeat(65_537));
  await assert.rejects(readJobFile(join(d, 'over')), refused(/larger than 65536 bytes/));
  writeFileSync(join(d, 'edge'), 'y'.repeat(5000));
  assert.equal(await readJobFile(join(d, 'edge'), 5000), 'y'.repeat(5000), 'a bound between two buffer sizes');
  writeFileSync(join(d, 'edge1'), 'y'.repeat(5001));
  await assert.rejects(readJobFile(join(d, 'edge1'), 5000), refused(/larger than 5000 bytes/));
});

test('job files: links, empty files, directories and oversized files are refused', async (t) => {
  const d = dir(t);
  writeFileSync(join(d, 'forged'), 'exitcode=0\n');
  symlinkSync(join(d, 'forged'), join(d, 'link'));
  await assert.rejects(readJobFile(join(d, 'link')), refused(/symbolic link/));
  writeFileSync(join(d, 'empty'), '');
  await assert.rejects(readJobFile(join(d, 'empty')), refused(/empty/));
  mkdirSync(join(d, 'adir'));
  await assert.rejects(readJobFile(join(d, 'adir')), refused(/not a regular file/));
  writeFileSync(join(d, 'big'), 'x'.repeat(101));
  await assert.rejects(readJobFile(join(d, 'big'), 100), refused(/larger than 100 bytes/));
});

test('job files: a FIFO is refused at once, with or without a writer holding it open', async (t) => {
  const d = dir(t);
  const fifo = join(d, 'status');
  execFileSync('mkfifo', [fifo]);
  // No writer: the read finds end of file at once.
  await assert.rejects(readJobFile(fifo), refused(/empty or not a regular file/));
  // A writer that never writes (O_RDWR opens a FIFO without waiting and counts as one).
  const fd = openSync(fifo, 'r+');
  t.after(() => closeSync(fd));
  await assert.rejects(readJobFile(fifo), refused(/not a regular file/));
});
