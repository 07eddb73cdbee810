/**
 * The native memory helper (src/service/malloc-trim.ts): compiled once, loaded, and
 * able to give back what the C library's malloc holds; the service loads it off the
 * start-up path and runs without it where it cannot be had.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadNativeMemory, nativeMemoryFile, startTrimPolicy } from '../../src/service/malloc-trim.js';
import { Client, removeDir, startCeres, stopCeres, tempDir } from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';

const FRAGMENT = fileURLToPath(new URL('./malloc-fragment.fixture.js', import.meta.url));

describe('native memory helper', () => {
  const dir = tempDir('native');
  after(() => removeDir(dir));

  it('is compiled once into the folder (0600, named for its source) and loaded', async () => {
    const why: string[] = [];
    const native = await loadNativeMemory(join(dir, 'a'), 'cc', (w) => why.push(w));
    assert.ok(native, `unavailable: ${why.join('; ')}`);
    const file = nativeMemoryFile(join(dir, 'a'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(join(dir, 'a')), [file.split('/').pop()], 'no source or temporary left');
    assert.equal(typeof native.trim(), 'boolean');
    assert.ok(native.held() >= 0);
    const mtime = statSync(file).mtimeMs;
    assert.ok(await loadNativeMemory(join(dir, 'a'), 'false'), 'a compiled helper is reused without a compiler');
    assert.equal(statSync(file).mtimeMs, mtime);
  });

  it('is unavailable, with the reason, when the compiler fails; nothing is left behind', async () => {
    const why: string[] = [];
    assert.equal(await loadNativeMemory(join(dir, 'b'), 'false', (w) => why.push(w)), undefined);
    assert.equal(why.length, 1);
    assert.deepEqual(readdirSync(join(dir, 'b')), []);
    assert.equal(await loadNativeMemory(join(dir, 'c'), join(dir, 'no-such-compiler'), (w) => why.push(w)), undefined);
    assert.equal(why.length, 2);
  });

  it('makes the helper again when the file in its place cannot be loaded', async () => {
    const d = join(dir, 'd');
    mkdirSync(d);
    writeFileSync(nativeMemoryFile(d), 'not a shared object');
    const why: string[] = [];
    const native = await loadNativeMemory(d, 'cc', (w) => why.push(w));
    assert.ok(native, why.join('; '));
    assert.ok(statSync(nativeMemoryFile(d)).size > 1000);
    const e = join(dir, 'e2');
    mkdirSync(e);
    writeFileSync(nativeMemoryFile(e), 'not a shared object');
    assert.equal(await loadNativeMemory(e, 'false', (w) => why.push(w)), undefined, 'damaged and no compiler');
    assert.equal(why.length, 1);
  });

  it('gives memory freed in the middle of the malloc heap back to the system', async () => {
    // A child allocates 2,000 native buffers of 40 KiB (under glibc's mmap threshold, so
    // they come from the main arena), keeps every 8th and frees the rest: the freed
    // memory lies between live buffers, where free() cannot return it. One trim must
    // take most of it out of the resident set.
    const out = await new Promise<string>((resolve, reject) => {
      const c = spawn(process.execPath, ['--expose-gc', FRAGMENT, join(dir, 'e')], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let o = '';
      c.stdout.on('data', (d: Buffer) => (o += d.toString()));
      c.on('exit', (code) => (code === 0 ? resolve(o) : reject(new Error(`child exited ${code}: ${o}`))));
    });
    const r = JSON.parse(out) as { beforeKiB: number; afterKiB: number; held: number; kept: number };
    assert.equal(r.kept, 250);
    assert.ok(r.held > 40 * 1024 * 1024, `malloc holds the freed buffers (${r.held} bytes)`);
    // ~68 MiB were freed; well over half of it must leave the resident set.
    assert.ok(r.beforeKiB - r.afterKiB > 40 * 1024, `RSS ${r.beforeKiB} -> ${r.afterKiB} KiB after the trim`);
  });
});

describe('trim policy', () => {
  it('trims on its timer and stops', async () => {
    let trims = 0;
    const seen: { released: boolean; heldBytes: number }[] = [];
    const p = startTrimPolicy({
      native: {
        trim: () => (++trims, true),
        held: () => 7,
      },
      intervalMs: 10,
      onTrimmed: (r) => seen.push(r),
    });
    await untilValue('two trims', () => Promise.resolve(trims >= 2 ? trims : undefined), 10_000);
    p.stop();
    const n = trims;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(trims, n, 'no trim after stop');
    assert.deepEqual(seen[0] && { released: seen[0].released, heldBytes: seen[0].heldBytes }, {
      released: true,
      heldBytes: 7,
    });
    assert.equal(p.trim(), true, 'a trim on demand');
  });
});

describe('the service and the helper', () => {
  it('compiles and loads the helper into <state>/native after it started serving', async (t) => {
    const c = await startCeres();
    t.after(async () => {
      await stopCeres(c);
      removeDir(c.stateDir);
    });
    const file = await untilValue('the helper mapped into the service', () => {
      const maps = readFileSync(`/proc/${c.child.pid}/maps`, 'utf8');
      return Promise.resolve(/\s(\S*\/native\/malloc-[0-9a-f]{16}\.node)$/m.exec(maps)?.[1]);
    });
    assert.equal(file, nativeMemoryFile(join(c.stateDir, 'native')));
    assert.equal(statSync(join(c.stateDir, 'native')).mode & 0o777, 0o700);
  });

  it('serves without it when the compiler fails, and says why', async (t) => {
    const c = await startCeres({ config: { log: { level: 'info' }, lrms: { fork: { compiler: 'false' } } } });
    t.after(async () => {
      await stopCeres(c);
      removeDir(c.stateDir);
    });
    await untilValue('the reason in the log', () =>
      Promise.resolve(c.output().includes('native memory helper unavailable') ? true : undefined),
    );
    const r = await Client.forUser(c).req('GET', '/rest');
    assert.equal(r.status, 200);
    assert.equal(c.child.exitCode, null);
  });
});
