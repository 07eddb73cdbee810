/**
 * The native memory helper (src/process/malloc-trim.ts): compiled once, loaded, and
 * able to give back what the C library's malloc holds; the service loads it off the
 * start-up path and runs without it where it cannot be had.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadNativeMemory, nativeMemoryFile, startTrimPolicy } from '../../src/process/malloc-trim.js';
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
    assert.equal(native.lastTrim(), -2, 'no trim on its own thread yet');
    assert.equal(native.trimAsync(), true);
    const ms = await untilValue('the trim on its own thread', () =>
      Promise.resolve(native.lastTrim() >= 0 ? native.lastTrim() : undefined),
    );
    assert.ok(ms < 60_000);
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
  const MiB = 1024 * 1024;
  function rig(): {
    rss: number;
    heap: number;
    trims: number;
    running: boolean;
    done: () => void;
    seen: { beforeBytes: number; afterBytes: number }[];
    policy: ReturnType<typeof startTrimPolicy>;
  } {
    const r = {
      rss: 100 * MiB,
      heap: 0,
      trims: 0,
      running: false,
      done: () => {
        r.running = false;
        r.rss -= 10 * MiB;
      },
      seen: [] as { beforeBytes: number; afterBytes: number }[],
      policy: undefined as unknown as ReturnType<typeof startTrimPolicy>,
    };
    r.policy = startTrimPolicy({
      native: {
        trim: () => true,
        trimAsync: () => {
          if (r.running) return false;
          r.trims++;
          r.running = true;
          return true;
        },
        lastTrim: () => (r.running ? -1 : 3),
        held: () => 7,
      },
      intervalMs: 3_600_000,
      minGrowthBytes: 16 * MiB,
      rssBytes: () => r.rss,
      heapBytes: () => r.heap,
      onTrimmed: (x) => r.seen.push({ beforeBytes: x.beforeBytes, afterBytes: x.afterBytes }),
    });
    return r;
  }

  it('trims once the resident set has grown by the threshold since the last trim, one at a time', (t) => {
    const r = rig();
    t.after(() => r.policy.stop());
    assert.equal(r.policy.tick(), false, 'nothing grew');
    r.rss = 115 * MiB;
    assert.equal(r.policy.tick(), false, 'under the threshold');
    r.rss = 117 * MiB;
    assert.equal(r.policy.tick(), true);
    assert.equal(r.trims, 1);
    assert.deepEqual(r.seen, [], 'reported when it has ended');
    r.rss = 140 * MiB;
    assert.equal(r.policy.tick(), false, 'no second trim while one runs');
    r.policy.trim();
    assert.equal(r.trims, 1, 'not on demand either');
    r.done();
    assert.equal(r.policy.tick(), false, 'the floor is the resident set after the trim');
    assert.deepEqual(r.seen, [{ beforeBytes: 117 * MiB, afterBytes: 130 * MiB }]);
    r.rss = 145 * MiB;
    assert.equal(r.policy.tick(), false);
    r.rss = 146 * MiB;
    assert.equal(r.policy.tick(), true, 'grown by the threshold again');
    assert.equal(r.trims, 2);
  });

  it('follows the resident set down, so later growth is measured from the lowest point', (t) => {
    const r = rig();
    t.after(() => r.policy.stop());
    r.rss = 60 * MiB;
    assert.equal(r.policy.tick(), false);
    r.rss = 76 * MiB;
    assert.equal(r.policy.tick(), true);
  });

  it("measures what malloc may hold: V8's heap shrinking by as much as the rest grew does not hide the growth", (t) => {
    const r = rig();
    t.after(() => r.policy.stop());
    r.rss = 180 * MiB;
    r.heap = 90 * MiB;
    r.policy.trim();
    r.done(); // 170 MiB resident, 80 of it outside the heap
    assert.equal(r.policy.tick(), false);
    // A full collection gives 20 MiB of V8's pages back while malloc's arena grows by 20:
    // the resident set is unchanged.
    r.heap = 70 * MiB;
    assert.equal(r.policy.tick(), true, '+20 MiB outside the heap');
    r.done();
    // And the other way round: V8's heap growing alone is not malloc's to give back.
    r.heap = 100 * MiB;
    r.rss += 30 * MiB;
    assert.equal(r.policy.tick(), false);
  });

  it('trims on demand and then measures from there', (t) => {
    const r = rig();
    t.after(() => r.policy.stop());
    r.rss = 110 * MiB;
    r.policy.trim();
    assert.equal(r.trims, 1);
    r.done();
    assert.equal(r.policy.tick(), false);
    r.rss = 115 * MiB;
    assert.equal(r.policy.tick(), false, '100 MiB after the trim, +15');
  });

  it('reports a trim that ended without waiting for the next look', async (t) => {
    const r = rig();
    t.after(() => r.policy.stop());
    r.rss = 120 * MiB;
    assert.equal(r.policy.tick(), true);
    r.done();
    await untilValue('the report', () => Promise.resolve(r.seen.length === 1 ? true : undefined), 10_000);
    assert.deepEqual(r.seen, [{ beforeBytes: 120 * MiB, afterBytes: 110 * MiB }]);
  });

  it('looks on its timer, and not after stop', async () => {
    let looks = 0;
    const p = startTrimPolicy({
      native: { trim: () => true, trimAsync: () => true, lastTrim: () => 0, held: () => 0 },
      intervalMs: 10,
      rssBytes: () => (looks++, 0),
    });
    await untilValue('three looks', () => Promise.resolve(looks >= 3 ? looks : undefined), 10_000);
    p.stop();
    const n = looks;
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(looks, n);
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
