// Staging through gfal2 against a real xrootd server (started once for this file, as the
// xrootd account, loopback clients only): root:// inputs and outputs, server-side adler32,
// the cache, and the failures a job must end on with a reason naming the URL.
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import { FileCache } from '../../src/staging/cache/file-cache.js';
import { createHasher } from '../../src/staging/checksum.js';
import type { StageInFile } from '../../src/staging/types.js';
import { Gfal2Limits } from '../../src/staging/gfal2/limits.js';
import { Gfal2Spares } from '../../src/staging/gfal2/spares.js';
import { Gfal2Pool, gfal2Download } from '../../src/staging/gfal2/transfers.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { never, sessionDirFor, stagingConfig, tempDir } from './helpers/fixtures.js';
import { XrootdServer, xrootdAvailable } from './helpers/xrootd.js';

const available = xrootdAvailable();
if (!available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('xrootd, gfal2 and root are needed here (CERES_REQUIRE_GFAL2=1)');

function adler32(b: Buffer): string {
  const h = createHasher('adler32');
  h.update(b);
  return h.digest();
}

/** An xrootd server whose adler32 of every file is wrong (a program of ours answers for it). */
async function lyingServer(t: TestContext): Promise<XrootdServer> {
  const dir = await tempDir(t);
  await chmod(dir, 0o755);
  const lie = join(dir, 'adler32.sh');
  await writeFile(lie, '#!/bin/sh\necho 0badc0de\n', { mode: 0o755 });
  const liar = await XrootdServer.start({ checksumProgram: lie });
  t.after(() => liar.stop());
  return liar;
}

const input = (name: string, source: string, extra: Partial<StageInFile> = {}): StageInFile => ({
  name,
  source,
  executable: false,
  ...extra,
});

describe('gfal2 staging against xrootd', { skip: !available && 'needs root, xrootd-server and python3-gfal2' }, () => {
  let xrd: XrootdServer;
  const small = randomBytes(300_000);
  before(async () => {
    xrd = await XrootdServer.start();
    await xrd.put('small.bin', small);
  });
  after(async () => {
    await xrd?.stop();
  });

  const stager = (): Stager => new Stager({ config: stagingConfig(), credentials: anonymousCredentials });
  const session = sessionDirFor;

  it('downloads a root:// input, verifying its adler32 (given and from the server)', async (t) => {
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      {
        id: 'in',
        owner: '/CN=a',
        sessionDir,
        files: [input('data/small.bin', xrd.url('small.bin'), { checksum: `adler32:${adler32(small)}` })],
      },
      never,
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await readFile(join(sessionDir, 'data/small.bin')), small);
    assert.equal(r.bytes, small.length);
  });

  it('uploads an output to root:// and the server holds the same bytes', async (t) => {
    const sessionDir = await session(t);
    const out = randomBytes(123_456);
    await writeFile(join(sessionDir, 'result.bin'), out);
    const r = await stager().stageOut(
      {
        id: 'out',
        owner: '/CN=a',
        sessionDir,
        outcome: 'success',
        files: [
          {
            name: 'result.bin',
            target: xrd.url('up/result.bin'),
            when: { success: true, failure: false, cancel: false },
          },
        ],
      },
      never,
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await readFile(xrd.path('up/result.bin')), out);
  });

  it('serves a second job from the cache after a stat through gfal2', async (t) => {
    const root = await tempDir(t);
    const config = stagingConfig({ cache: { enabled: true, maxBytes: 1e9, accessRecheckSeconds: 0 } });
    const cache = await FileCache.open({
      dir: join(root, 'cache'),
      maxBytes: config.cache.maxBytes,
      accessRecheckMs: 0,
      lockStaleMs: 60_000,
    });
    const s = new Stager({ config, cache, credentials: anonymousCredentials });
    const run = async (id: string) => {
      const sessionDir = join(root, id);
      await mkdir(sessionDir);
      return s.stageIn({ id, owner: '/CN=a', sessionDir, files: [input('f', xrd.url('small.bin'))] }, never);
    };
    const first = await run('c1');
    assert.equal(first.ok, true, first.failureReason);
    assert.equal(first.files[0]?.fromCache, false);
    const second = await run('c2');
    assert.equal(second.ok, true, second.failureReason);
    assert.equal(second.files[0]?.fromCache, true);
    assert.deepEqual(await readFile(join(root, 'c2', 'f')), small);
  });

  it('fails a missing file at once, naming the URL', async (t) => {
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      { id: 'm', owner: '/CN=a', sessionDir, files: [input('x', xrd.url('nope.bin'))] },
      never,
    );
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /root:\/\/127\.0\.0\.1:\d+\/\/data\/nope\.bin.*no such file/);
    assert.equal(r.files[0]?.attempts, 1, 'a missing file is not retried');
  });

  it('fails on a wrong checksum and leaves no file in the session', async (t) => {
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      {
        id: 'k',
        owner: '/CN=a',
        sessionDir,
        files: [input('k.bin', xrd.url('small.bin'), { checksum: 'adler32:00000001' })],
      },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH');
    assert.match(r.failureReason ?? '', /checksum mismatch/);
    await assert.rejects(readFile(join(sessionDir, 'k.bin')));
  });

  it("fails when the server's adler32 is not the copy's (end to end, no checksum given), leaving no file", async (t) => {
    // A server that answers a wrong adler32 (a program of ours computes it for the server):
    // the copy is complete, but it is not what the server says it holds.
    const liar = await lyingServer(t);
    await liar.put('small.bin', small);
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      { id: 'e2e', owner: '/CN=a', sessionDir, files: [input('e.bin', liar.url('small.bin'))] },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH');
    assert.match(r.failureReason ?? '', /small\.bin.*checksum mismatch/);
    await assert.rejects(readFile(join(sessionDir, 'e.bin')));
  });

  it("fails a small file of declared size whose server adler32 is not the copy's (gfal2's own check), leaving no file", async (t) => {
    // A declared size under SMALL_FILE_BYTES hands the end-to-end comparison to gfal2's
    // "both" mode: it must fail the file as the helper's own comparison does.
    const liar = await lyingServer(t);
    await liar.put('sized.bin', small);
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      {
        id: 'e2e-sized',
        owner: '/CN=a',
        sessionDir,
        files: [input('s.bin', liar.url('sized.bin'), { size: small.length })],
      },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH', r.failureReason);
    assert.match(r.failureReason ?? '', /sized\.bin.*checksum mismatch/);
    await assert.rejects(readFile(join(sessionDir, 's.bin')));
  });

  it('stages small files of declared size (checked by gfal2) and the same without a size', async (t) => {
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      {
        id: 'sized',
        owner: '/CN=a',
        sessionDir,
        files: [input('a.bin', xrd.url('small.bin'), { size: small.length }), input('b.bin', xrd.url('small.bin'))],
      },
      never,
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await readFile(join(sessionDir, 'a.bin')), small);
    assert.deepEqual(await readFile(join(sessionDir, 'b.bin')), small);
  });

  it("fails a large file whose server adler32 is not the copy's (asked beside the copy), leaving no file", async (t) => {
    // 12 MiB: xrootd reports the copy after its first 8 MiB, and the helper hands the
    // server's checksum to another thread then (a small file asks after its copy, above).
    const liar = await lyingServer(t);
    await liar.put('large.bin', randomBytes(12 << 20));
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      { id: 'e2e-large', owner: '/CN=a', sessionDir, files: [input('l.bin', liar.url('large.bin'))] },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH', r.failureReason);
    assert.match(r.failureReason ?? '', /large\.bin.*checksum mismatch/);
    await assert.rejects(readFile(join(sessionDir, 'l.bin')));
  });

  it('stages a large file whose adler32 was asked beside the copy', async (t) => {
    const large = randomBytes(12 << 20);
    await xrd.put('large.bin', large);
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      { id: 'large', owner: '/CN=a', sessionDir, files: [input('l.bin', xrd.url('large.bin'))] },
      never,
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await readFile(join(sessionDir, 'l.bin')), large);
  });

  it('downloads of unknown size after small ones are checked by gfal2 (both mode); a large one among them is still checked and ends that', async (t) => {
    // The helper's requests, seen through a wrapper of the real helper's request: the
    // first download of the job keeps the helper's own comparison, the next ones are sent
    // as expected small; a file that turns out large (12 MiB) is still staged whole, and a
    // lying server's is failed, by gfal2's check; after a large answer, no more predictions.
    const large = randomBytes(12 << 20);
    await xrd.put('predicted-large.bin', large);
    const liar = await lyingServer(t);
    await liar.put('large.bin', large);
    const dir = await tempDir(t);
    const spares = new Gfal2Spares({ connectSeconds: 5, idleSeconds: 10 }, 0);
    const job = (): { pool: Gfal2Pool; sent: Record<string, unknown>[]; get: (url: string) => Promise<unknown> } => {
      const pool = new Gfal2Pool(stagingConfig(), new Gfal2Limits(4, 4), spares);
      t.after(() => pool.close());
      const helper = pool.helper(undefined, undefined);
      const sent: Record<string, unknown>[] = [];
      const request = helper.request.bind(helper);
      helper.request = (req, ...rest) => {
        sent.push(req);
        return request(req, ...rest);
      };
      let n = 0;
      const get = (url: string): Promise<unknown> =>
        gfal2Download(
          pool,
          helper,
          new URL(url),
          join(dir, `f${n++}`),
          { algorithms: [], onProgress: () => undefined, mode: 0o644 },
          never,
        );
      return { pool, sent, get };
    };

    const honest = job();
    await honest.get(xrd.url('small.bin'));
    await honest.get(xrd.url('small.bin'));
    await honest.get(xrd.url('predicted-large.bin'));
    await honest.get(xrd.url('small.bin'));
    assert.deepEqual(
      honest.sent.map((r) => r['small'] === true),
      [false, true, true, false],
    );
    assert.deepEqual(await readFile(join(dir, 'f2')), large);
    assert.deepEqual(await readFile(join(dir, 'f3')), small);

    const lied = job();
    await lied.get(xrd.url('small.bin'));
    await assert.rejects(
      lied.get(liar.url('large.bin')),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_STAGING_CHECKSUM_MISMATCH',
    );
    assert.equal(lied.sent[1]?.['small'], true);
  });

  it('an input of root:// whose name is a directory of the session fails naming it, and the directory stays', async (t) => {
    // The download is moved to its name by one rename, which cannot replace a directory;
    // the name is looked at only then (not before every download).
    const sessionDir = await session(t);
    await mkdir(join(sessionDir, 'd.bin'));
    await writeFile(join(sessionDir, 'd.bin', 'kept'), 'x');
    const r = await stager().stageIn(
      { id: 'dir', owner: '/CN=a', sessionDir, files: [input('d.bin', xrd.url('small.bin'))] },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_UNSAFE_PATH', r.failureReason);
    assert.match(r.failureReason ?? '', /d\.bin: a directory is in the way/);
    assert.deepEqual(await readdir(join(sessionDir, 'd.bin')), ['kept']);
  });

  it('many small files of one job: each is checked, and the one missing among them fails the job naming its URL', async (t) => {
    const files = Array.from({ length: 30 }, (_, i) => randomBytes(1000 + i));
    for (const [i, b] of files.entries()) await xrd.put(`many-${i}.bin`, b);
    const sessionDir = await session(t);
    const ok = await stager().stageIn(
      {
        id: 'many',
        owner: '/CN=a',
        sessionDir,
        files: files.map((b, i) =>
          input(`m/${i}.bin`, xrd.url(`many-${i}.bin`), { checksum: `adler32:${adler32(b)}` }),
        ),
      },
      never,
    );
    assert.equal(ok.ok, true, ok.failureReason);
    for (const [i, b] of files.entries()) assert.deepEqual(await readFile(join(sessionDir, `m/${i}.bin`)), b);

    const again = await session(t);
    const sources = files.map((_, i) => xrd.url(i === 17 ? 'many-gone.bin' : `many-${i}.bin`));
    const r = await stager().stageIn(
      { id: 'many-gone', owner: '/CN=a', sessionDir: again, files: sources.map((u, i) => input(`m/${i}.bin`, u)) },
      never,
    );
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /\/\/data\/many-gone\.bin.*no such file/);
    assert.doesNotMatch(r.failureReason ?? '', /many-\d+\.bin/, 'only the missing file is named');
    assert.equal(r.files[17]?.ok, false);
  });

  it("fails an input whose size is not the description's, leaving no file, and keeps the mode asked for", async (t) => {
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      {
        id: 'size',
        owner: '/CN=a',
        sessionDir,
        files: [input('wrong.bin', xrd.url('small.bin'), { size: small.length + 1 })],
      },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_SIZE_MISMATCH');
    assert.match(r.failureReason ?? '', /small\.bin.*size mismatch/);
    assert.deepEqual(await readdir(sessionDir), [], 'nothing left in the session');

    const again = await session(t);
    const ok = await stager().stageIn(
      {
        id: 'mode',
        owner: '/CN=a',
        sessionDir: again,
        files: [input('run.sh', xrd.url('small.bin'), { executable: true })],
      },
      never,
    );
    assert.equal(ok.ok, true, ok.failureReason);
    assert.equal((await stat(join(again, 'run.sh'))).mode & 0o7777, 0o755);
  });

  it('fails an unreadable file as permission denied, and keeps an existing output with overwrite=no', async (t) => {
    await xrd.put('secret.bin', Buffer.from('secret'));
    await chmod(xrd.path('secret.bin'), 0o000);
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      { id: 'p', owner: '/CN=a', sessionDir, files: [input('s', xrd.url('secret.bin'))] },
      never,
    );
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /secret\.bin.*permission denied/);

    await writeFile(join(sessionDir, 'o.bin'), 'new');
    const o = await stager().stageOut(
      {
        id: 'o',
        owner: '/CN=a',
        sessionDir,
        outcome: 'success',
        files: [
          {
            name: 'o.bin',
            target: xrd.url('small.bin'),
            options: { overwrite: 'no' },
            when: { success: true, failure: false, cancel: false },
          },
        ],
      },
      never,
    );
    assert.equal(o.ok, false);
    assert.match(o.failureReason ?? '', /small\.bin.*exists/);
    assert.deepEqual(await readFile(xrd.path('small.bin')), small);
  });

  it('an output the job swapped for a link (to a file, through a folder) is not sent: nothing of the target reaches the server', async (t) => {
    const sessionDir = await session(t);
    const outside = join(await tempDir(t), 'secret.txt');
    await writeFile(outside, "not the job owner's\n", { mode: 0o600 });
    await symlink(outside, join(sessionDir, 'leak.bin'));
    await symlink(dirname(outside), join(sessionDir, 'dir'));
    const when = { success: true, failure: false, cancel: false };
    const r = await stager().stageOut(
      {
        id: 'link',
        owner: '/CN=a',
        sessionDir,
        outcome: 'success',
        files: [
          { name: 'leak.bin', target: xrd.url('up/leak.bin'), when },
          { name: 'dir/secret.txt', target: xrd.url('up/secret.txt'), when },
        ],
      },
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.files.filter((f) => f.ok).length, 0, JSON.stringify(r.files));
    await assert.rejects(readFile(xrd.path('up/leak.bin')));
    await assert.rejects(readFile(xrd.path('up/secret.txt')));
  });

  it('refuses a grid protocol whose gfal2 plugin is not installed', async (t) => {
    const sessionDir = await session(t);
    const r = await stager().stageIn(
      { id: 'g', owner: '/CN=a', sessionDir, files: [input('g', 'gsiftp://127.0.0.1/data/g')] },
      never,
    );
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /gsiftp/);
  });
});

describe(
  'gfal2 staging when the xrootd server dies',
  { skip: !available && 'needs root, xrootd-server and python3-gfal2' },
  () => {
    it('fails the job within bounds, not after xrootd default minutes of retries', async (t) => {
      const xrd = await XrootdServer.start();
      t.after(() => xrd.stop());
      const big = randomBytes(64 * 1024 * 1024);
      await xrd.put('big.bin', big);
      const sessionDir = join(await tempDir(t), 's');
      await mkdir(sessionDir);
      const s = new Stager({
        config: stagingConfig({ timeouts: { connectSeconds: 3, headersSeconds: 5, idleSeconds: 5 } }),
        credentials: anonymousCredentials,
      });
      const started = Date.now();
      let killed = false;
      const r = await s.stageIn(
        { id: 'd', owner: '/CN=a', sessionDir, files: [input('big.bin', xrd.url('big.bin'))] },
        never,
        (p) => {
          // Killed once the first bytes have arrived: mid-transfer.
          if (!killed && p.fileBytes > 0) {
            killed = true;
            void xrd.kill();
          }
        },
      );
      const seconds = (Date.now() - started) / 1000;
      if (!killed) {
        // The copy finished before any progress report (a fast machine): kill now and
        // check the next transfer fails fast instead.
        await xrd.kill();
        const again = await s.stageIn(
          { id: 'd2', owner: '/CN=a', sessionDir: sessionDir, files: [input('again.bin', xrd.url('big.bin'))] },
          never,
        );
        assert.equal(again.ok, false);
        assert.match(again.failureReason ?? '', /big\.bin.*(server down|timed out)/);
        return;
      }
      assert.equal(r.ok, false, 'the transfer cannot succeed once the server is gone');
      assert.match(r.failureReason ?? '', /big\.bin.*(server down|timed out|helper ended)/);
      assert.ok(seconds < 120, `took ${seconds} s`);
    });
  },
);
