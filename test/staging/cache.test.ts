// The shared input cache with real downloads: one download for many jobs, access
// re-checks with each user's credential, LRU eviction, restart, and damage recovery.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, stat, utimes, writeFile, appendFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { FileCache } from '../../src/staging/cache/file-cache.js';
import type { StageInFile, StageResult } from '../../src/staging/types.js';
import { patternBuffer, TestServer, type ServerOptions } from './helpers/test-server.js';
import { makePki, mapCredentials, never, stagingConfig, tempDir, type TestPki } from './helpers/fixtures.js';
import { createHasher } from '../../src/staging/checksum.js';

type T = Parameters<typeof tempDir>[0];
let pki: TestPki;
const pkiDir = mkdtempSync(join(tmpdir(), 'ceres-staging-pki-'));
before(async () => {
  pki = await makePki(pkiDir);
});
after(() => rmSync(pkiDir, { recursive: true, force: true }));

const ALICE = '/CN=alice';
const BOB = '/CN=bob';

interface Setup {
  server: TestServer;
  root: string;
  cache: FileCache;
  stager: Stager;
  clock: { now: number };
  run(owner: string, files: StageInFile[], tag?: string): Promise<StageResult & { sessionDir: string }>;
}

async function setup(
  t: T,
  opts: { server?: Omit<ServerOptions, 'tls'>; maxBytes?: number; recheckSeconds?: number; root?: string } = {},
): Promise<Setup> {
  const server = await TestServer.start({
    ...opts.server,
    tls: { key: pki.hostKey, cert: pki.hostCert, clientCa: pki.caPem },
  });
  t.after(() => server.close());
  const root = opts.root ?? (await tempDir(t));
  const clock = { now: Date.now() };
  const config = stagingConfig({
    cache: { enabled: true, maxBytes: opts.maxBytes ?? 1e9, accessRecheckSeconds: opts.recheckSeconds ?? 3600 },
  });
  const cache = await FileCache.open({
    dir: join(root, 'cache'),
    maxBytes: config.cache.maxBytes,
    accessRecheckMs: config.cache.accessRecheckSeconds * 1000,
    lockStaleMs: 60_000,
    now: () => clock.now,
  });
  // Each owner delegates their own proxy: alice = the dev user, bob = the second user.
  const credentials = mapCredentials({}, { [ALICE]: pki.alice, [BOB]: pki.bob });
  const stager = new Stager({ config, credentials, cache, ca: [pki.caPem] });
  let n = 0;
  const run = async (owner: string, files: StageInFile[], tag = `s${n++}`) => {
    const sessionDir = join(root, 'sessions', tag);
    await mkdir(sessionDir, { recursive: true });
    return { ...(await stager.stageIn({ id: tag, owner, sessionDir, files }, never)), sessionDir };
  };
  return { server, root, cache, stager, clock, run };
}

const input = (name: string, source: string, extra: Partial<StageInFile> = {}): StageInFile => ({
  name,
  source,
  executable: false,
  ...extra,
});
const onlyAlice: ServerOptions['authorize'] = (r) => r.identity === 'Ceres Dev User';

describe('cache: serving', () => {
  it('a second job gets the file without a second download, hard-linked', async (t) => {
    const s = await setup(t);
    const body = patternBuffer(400_000);
    s.server.resources.set('/f', { body, etag: '"1"' });
    const r1 = await s.run(ALICE, [input('f', s.server.url('/f'))]);
    const r2 = await s.run(ALICE, [input('again', s.server.url('/f'))]);
    assert.equal(r1.ok && r2.ok, true, r1.failureReason ?? r2.failureReason);
    assert.equal(s.server.count('GET', '/f'), 1);
    assert.equal(s.server.count('HEAD', '/f'), 0, 'the same owner checked access moments ago');
    assert.deepEqual([r1.files[0]?.fromCache, r2.files[0]?.fromCache], [false, true]);
    assert.match(r2.control.statistics[0] ?? '', /,size=400000,.*,fromcache=yes$/);
    assert.doesNotMatch(r1.control.statistics[0] ?? '', /fromcache/);
    const [a, b] = [await stat(join(r1.sessionDir, 'f')), await stat(join(r2.sessionDir, 'again'))];
    assert.equal(a.ino, b.ino, 'both sessions link the cached file');
    assert.equal(a.mode & 0o222, 0, 'cached files are read-only');
    assert.deepEqual(await readFile(join(r2.sessionDir, 'again')), body);
  });

  it('concurrent jobs asking for the same URL share one download', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/slow', { body: patternBuffer(300_000) });
    s.server.fault('/slow', { kind: 'stall', afterBytes: 100_000, ms: 300 });
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => s.run(ALICE, [input('x', s.server.url('/slow'))], `c${i}`)),
    );
    assert.ok(results.every((r) => r.ok));
    assert.equal(s.server.count('GET', '/slow'), 1);
    assert.equal(results.filter((r) => r.files[0]?.fromCache === false).length, 1);
    for (const r of results) assert.equal((await stat(join(r.sessionDir, 'x'))).size, 300_000);
  });

  it('another user waiting on the same download is checked with their own credential first', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/slow', { body: patternBuffer(200_000) });
    s.server.fault('/slow', { kind: 'stall', afterBytes: 50_000, ms: 300 });
    const [ra, rb] = await Promise.all([
      s.run(ALICE, [input('x', s.server.url('/slow'))]),
      s.run(BOB, [input('x', s.server.url('/slow'))]),
    ]);
    assert.equal(ra.ok && rb.ok, true);
    assert.equal(s.server.count('GET', '/slow'), 1);
    // Whichever job came second waited for the first one's download, then proved its own access.
    const waiter = ra.files[0]?.fromCache === true ? 'Ceres Dev User' : 'bob';
    assert.equal([ra, rb].filter((r) => r.files[0]?.fromCache === true).length, 1);
    assert.deepEqual(
      s.server.hits.filter((h) => h.method === 'HEAD').map((h) => h.identity),
      [waiter],
    );
  });

  it('executable inputs are copies (the shared inode stays read-only)', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/run.sh', { body: Buffer.from('#!/bin/sh\n') });
    const r1 = await s.run(ALICE, [input('run.sh', s.server.url('/run.sh'), { executable: true })]);
    const r2 = await s.run(ALICE, [input('data', s.server.url('/run.sh'))]);
    const [a, b] = [await stat(join(r1.sessionDir, 'run.sh')), await stat(join(r2.sessionDir, 'data'))];
    assert.notEqual(a.ino, b.ino);
    assert.equal(a.mode & 0o111, 0o111);
    assert.equal(b.mode & 0o333, 0);
    assert.equal(s.server.count('GET'), 1);
  });

  it('the index survives a restart', async (t) => {
    const root = await tempDir(t);
    const first = await setup(t, { root });
    first.server.resources.set('/f', { body: Buffer.from('persisted') });
    const url = first.server.url('/f');
    assert.equal((await first.run(ALICE, [input('f', url)], 'one')).ok, true);
    const reopened = await FileCache.open({
      dir: join(root, 'cache'),
      maxBytes: 1e9,
      accessRecheckMs: 3_600_000,
      lockStaleMs: 60_000,
    });
    assert.equal(reopened.has(new URL(url).href), true);
    assert.deepEqual(reopened.stats().entries, 1);
    assert.deepEqual(reopened.stats().bytes, 9);
  });
});

describe('cache: permissions and validity', () => {
  it('a user the source refuses does not get the cached file', async (t) => {
    const s = await setup(t, { server: { authorize: onlyAlice } });
    s.server.resources.set('/private', { body: Buffer.from('alice only') });
    const ra = await s.run(ALICE, [input('p', s.server.url('/private'))]);
    const rb = await s.run(BOB, [input('p', s.server.url('/private'))]);
    assert.equal(ra.ok, true, ra.failureReason);
    assert.equal(rb.ok, false);
    assert.equal(rb.files[0]?.code, 'CE_ERR_STAGING_ACCESS_DENIED');
    assert.equal(
      rb.failureReason,
      `Failed to download ${s.server.url('/private')}: access check refused: 403 Forbidden`,
    );
    assert.deepEqual(await readdir(rb.sessionDir), []);
    assert.equal(s.server.count('GET', '/private'), 1);
  });

  it("after the re-check interval, the same user's access is checked again and can be lost", async (t) => {
    let allowed = true;
    const s = await setup(t, { server: { authorize: () => allowed }, recheckSeconds: 60 });
    s.server.resources.set('/f', { body: Buffer.from('x') });
    assert.equal((await s.run(ALICE, [input('f', s.server.url('/f'))])).ok, true);
    s.clock.now += 30_000;
    assert.equal((await s.run(ALICE, [input('f', s.server.url('/f'))])).ok, true);
    assert.equal(s.server.count('HEAD'), 0, 'within the interval: no check');
    s.clock.now += 61_000;
    allowed = false;
    const r = await s.run(ALICE, [input('f', s.server.url('/f'))]);
    assert.equal(r.ok, false);
    assert.equal(s.server.count('HEAD'), 1);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_ACCESS_DENIED');
  });

  it('a server without HEAD is asked with a one-byte ranged GET', async (t) => {
    const s = await setup(t, { server: { authorize: (r) => (r.method === 'HEAD' ? 405 : true) } });
    s.server.resources.set('/f', { body: Buffer.from('abcdef') });
    assert.equal((await s.run(ALICE, [input('f', s.server.url('/f'))])).ok, true);
    const rb = await s.run(BOB, [input('f', s.server.url('/f'))]);
    assert.equal(rb.ok, true, rb.failureReason);
    assert.equal(rb.files[0]?.fromCache, true);
    assert.deepEqual(
      s.server.hits.filter((h) => h.range !== undefined).map((h) => h.range),
      ['bytes=0-0'],
    );
  });

  it('a changed source (new ETag at the check) is fetched again', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/f', { body: Buffer.from('old'), etag: '"1"' });
    assert.equal((await s.run(ALICE, [input('f', s.server.url('/f'))])).ok, true);
    s.server.resources.set('/f', { body: Buffer.from('new!'), etag: '"2"' });
    const rb = await s.run(BOB, [input('f', s.server.url('/f'))]);
    assert.equal(rb.ok, true, rb.failureReason);
    assert.equal(rb.files[0]?.fromCache, false);
    assert.equal(await readFile(join(rb.sessionDir, 'f'), 'utf8'), 'new!');
    assert.equal(s.server.count('GET', '/f'), 2);
  });

  it('a cached file changed through a hard link is dropped, not handed out', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/f', { body: Buffer.from('pristine') });
    const r1 = await s.run(ALICE, [input('f', s.server.url('/f'))]);
    const linked = join(r1.sessionDir, 'f');
    await chmod(linked, 0o644);
    await appendFile(linked, ' + tampered');
    const r2 = await s.run(ALICE, [input('f', s.server.url('/f'))]);
    assert.equal(r2.ok, true, r2.failureReason);
    assert.equal(await readFile(join(r2.sessionDir, 'f'), 'utf8'), 'pristine');
    assert.equal(s.server.count('GET', '/f'), 2);
  });

  it('a checksum the cached file does not have fails the job and drops the entry', async (t) => {
    const s = await setup(t);
    const body = Buffer.from('content');
    s.server.resources.set('/f', { body });
    assert.equal((await s.run(ALICE, [input('f', s.server.url('/f'))])).ok, true);
    const r = await s.run(ALICE, [input('f', s.server.url('/f'), { checksum: 'adler32:00000001' })]);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH');
    assert.equal(s.cache.has(new URL(s.server.url('/f')).href), false);
    const h = createHasher('adler32');
    h.update(body);
    const ok = await s.run(ALICE, [input('f', s.server.url('/f'), { checksum: `adler32:${h.digest()}` })]);
    assert.equal(ok.ok, true, ok.failureReason);
    assert.equal(s.server.count('GET', '/f'), 2);
  });

  it('waiters of the same user share a failed download instead of repeating it', async (t) => {
    const s = await setup(t);
    s.server.fault('/missing', { kind: 'delayHeaders', ms: 200 });
    const rs = await Promise.all([1, 2, 3].map((i) => s.run(ALICE, [input('m', s.server.url('/missing'))], `w${i}`)));
    assert.ok(rs.every((r) => !r.ok && /404 Not Found$/.test(r.failureReason ?? '')));
    assert.equal(s.server.count('GET', '/missing'), 1);
  });
});

describe('cache: size bound and bypass', () => {
  it('evicts the least recently used files beyond the size bound', async (t) => {
    const s = await setup(t, { maxBytes: 250_000 });
    for (const p of ['/a', '/b', '/c', '/d']) s.server.resources.set(p, { body: patternBuffer(100_000) });
    const url = (p: string): string => new URL(s.server.url(p)).href;
    await s.run(ALICE, [input('a', s.server.url('/a'))]);
    s.clock.now += 1000;
    await s.run(ALICE, [input('b', s.server.url('/b'))]);
    s.clock.now += 1000;
    await s.run(ALICE, [input('a', s.server.url('/a'))]); // a is now more recent than b
    s.clock.now += 1000;
    await s.run(ALICE, [input('c', s.server.url('/c'))]);
    assert.deepEqual(
      ['/a', '/b', '/c'].map((p) => s.cache.has(url(p))),
      [true, false, true],
    );
    s.clock.now += 1000;
    await s.run(ALICE, [input('d', s.server.url('/d'))]);
    assert.deepEqual(
      ['/a', '/b', '/c', '/d'].map((p) => s.cache.has(url(p))),
      [false, false, true, true],
    );
    assert.ok(s.cache.stats().bytes <= 250_000);
    const files = (await readdir(join(s.root, 'cache', 'data'), { recursive: true }))
      .map(String)
      .filter((f) => /[0-9a-f]{64}$/.test(f));
    assert.equal(files.length, 2, 'evicted files are deleted from disk');
  });

  it('a file larger than the whole cache is delivered but not kept', async (t) => {
    const s = await setup(t, { maxBytes: 1000 });
    s.server.resources.set('/big', { body: patternBuffer(5000) });
    const r = await s.run(ALICE, [input('big', s.server.url('/big'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal((await stat(join(r.sessionDir, 'big'))).size, 5000);
    assert.equal(s.cache.stats().entries, 0);
    await new Promise((res) => setTimeout(res, 50));
    const left = (await readdir(join(s.root, 'cache', 'data'), { recursive: true }))
      .map(String)
      .filter((f) => /[0-9a-f]{64}/.test(f));
    assert.deepEqual(left, []);
  });

  it('cache=no bypasses the cache', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/f', { body: Buffer.from('x') });
    await s.run(ALICE, [input('f', s.server.url('/f'), { options: { cache: 'no' } })]);
    await s.run(ALICE, [input('f', s.server.url('/f'), { options: { cache: 'no' } })]);
    assert.equal(s.server.count('GET', '/f'), 2);
    assert.equal(s.cache.stats().entries, 0);
  });

  it('cache=renew fetches again and replaces the entry', async (t) => {
    const s = await setup(t);
    s.server.resources.set('/f', { body: Buffer.from('v1') });
    await s.run(ALICE, [input('f', s.server.url('/f'))]);
    s.server.resources.set('/f', { body: Buffer.from('v2') });
    const r = await s.run(ALICE, [input('f', s.server.url('/f'), { options: { cache: 'renew' } })]);
    assert.equal(await readFile(join(r.sessionDir, 'f'), 'utf8'), 'v2');
    assert.equal(s.server.count('GET', '/f'), 2);
    assert.equal(s.cache.stats().entries, 1);
  });
});

describe('cache: crash leftovers and other processes', () => {
  const lockOf = (root: string, url: string): { dir: string; lock: string } => {
    const h = createHash('sha256').update(url).digest('hex');
    const dir = join(root, 'cache', 'data', h.slice(0, 2));
    return { dir, lock: join(dir, `${h}.lock`) };
  };

  it("a dead process's download lock is taken over", async (t) => {
    const s = await setup(t);
    s.server.resources.set('/f', { body: Buffer.from('x') });
    const url = new URL(s.server.url('/f')).href;
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const { dir, lock } = lockOf(s.root, url);
    await mkdir(dir, { recursive: true });
    await writeFile(lock, JSON.stringify({ host: hostname(), pid: Number(dead), token: 'x' }));
    const r = await s.run(ALICE, [input('f', s.server.url('/f'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(s.server.count('GET'), 1);
  });

  it("a live process's lock is waited for, and its result used", async (t) => {
    const s = await setup(t);
    s.server.resources.set('/f', { body: Buffer.from('x') });
    const url = new URL(s.server.url('/f')).href;
    const { dir, lock } = lockOf(s.root, url);
    await mkdir(dir, { recursive: true });
    await writeFile(lock, JSON.stringify({ host: hostname(), pid: process.ppid, token: 'x' }));
    const p = s.run(ALICE, [input('f', s.server.url('/f'))]);
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(s.server.count('GET'), 0, 'still waiting for the other process');
    const { rm } = await import('node:fs/promises');
    await rm(lock);
    const r = await p;
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(s.server.count('GET'), 1);
  });

  it('opening removes partial downloads and data without metadata', async (t) => {
    const root = await tempDir(t);
    const sub = join(root, 'cache', 'data', 'ab');
    await mkdir(sub, { recursive: true });
    const h = `ab${'0'.repeat(62)}`;
    await writeFile(join(sub, `${h}.part-0123abcd`), 'partial');
    await utimes(join(sub, `${h}.part-0123abcd`), new Date(0), new Date(0));
    await writeFile(join(sub, h), 'orphan data');
    await writeFile(join(sub, `${'ab'}${'1'.repeat(62)}.meta`), '{torn');
    const c = await FileCache.open({
      dir: join(root, 'cache'),
      maxBytes: 1e6,
      accessRecheckMs: 1000,
      lockStaleMs: 1000,
    });
    assert.equal(c.stats().entries, 0);
    assert.deepEqual(await readdir(sub), []);
  });
});
