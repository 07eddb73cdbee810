// Stage-out against a real WebDAV-style server on loopback: uploads, parent
// collections, outcome flags, pruning and removal of uploaded outputs, failures.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import type { Outcome, StageOutFile } from '../../src/staging/types.js';
import { patternBuffer, TestServer, type ServerOptions } from './helpers/test-server.js';
import { never, stagingConfig, tempDir } from './helpers/fixtures.js';

type T = Parameters<typeof tempDir>[0];

async function setup(
  t: T,
  serverOpts: ServerOptions = { requireCollections: true },
  config = stagingConfig({ cache: { enabled: false } }),
) {
  const server = await TestServer.start(serverOpts);
  t.after(() => server.close());
  const root = await tempDir(t);
  const sessionDir = join(root, 'session');
  await mkdir(sessionDir);
  const stager = new Stager({ config, credentials: anonymousCredentials });
  const run = (files: StageOutFile[], outcome: Outcome = 'success') =>
    stager.stageOut({ id: 'j', owner: 'o', sessionDir, files, outcome }, never);
  const write = async (rel: string, content: string | Buffer): Promise<void> => {
    await mkdir(join(sessionDir, rel, '..'), { recursive: true });
    await writeFile(join(sessionDir, rel), content);
  };
  return { server, sessionDir, root, run, write };
}

const onSuccess = { success: true, failure: false, cancel: false };
const always = { success: true, failure: true, cancel: true };
const out = (name: string, target?: string, when = onSuccess, extra: Partial<StageOutFile> = {}): StageOutFile => ({
  name,
  when,
  ...(target === undefined ? {} : { target }),
  ...extra,
});
const files = async (dir: string): Promise<string[]> => (await readdir(dir, { recursive: true })).map(String).sort();

describe('stage-out: happy paths', () => {
  it('uploads outputs (creating WebDAV parent collections), keeps client outputs, prunes the rest', async (t) => {
    const { server, sessionDir, run, write } = await setup(t);
    const big = patternBuffer(2_500_000);
    await write('result.dat', big);
    await write('stdout', 'hello\n');
    await write('scratch/tmp.bin', 'x');
    const r = await run([out('result.dat', server.url('/store/run1/deep/result.dat', 'dav')), out('stdout')]);
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(server.stored.get('/store/run1/deep/result.dat'), big);
    assert.ok(server.collections.has('/store/run1/deep/'));
    // dav://: parents are made before the PUT, so the body is sent once.
    assert.deepEqual(
      server.hits.filter((h) => h.method !== 'HEAD').map((h) => `${h.method} ${h.path}`),
      [
        'MKCOL /store/run1/deep/',
        'MKCOL /store/run1/',
        'MKCOL /store/',
        'MKCOL /store/run1/',
        'MKCOL /store/run1/deep/',
        'PUT /store/run1/deep/result.dat',
      ],
    );
    assert.deepEqual(await files(sessionDir), ['stdout'], 'uploaded output removed, stdout kept, scratch pruned');
    assert.deepEqual(
      r.files.map((f) => [f.name, f.kind, f.ok, f.bytes]),
      [
        ['result.dat', 'upload', true, 2_500_000],
        ['stdout', 'kept', true, 0],
      ],
    );
    assert.deepEqual(r.control.outputStatus, [`/result.dat ${server.url('/store/run1/deep/result.dat')}`]);
    assert.match(
      r.control.statistics[0] ?? '',
      /^outputfile:url=http:\/\/127\.0\.0\.1:\d+\/store\/run1\/deep\/result\.dat,size=2500000,starttime=\S+Z,endtime=\S+Z$/,
    );
  });

  it('uses only the targets meant for the outcome; the others stay for the client', async (t) => {
    const { server, sessionDir, run, write } = await setup(t, {});
    await write('always.log', 'a');
    await write('only-ok.dat', 'b');
    await write('on-fail.dat', 'c');
    const r = await run(
      [
        out('always.log', server.url('/a'), always),
        out('only-ok.dat', server.url('/b')),
        out('on-fail.dat', server.url('/c'), { success: false, failure: true, cancel: false }),
      ],
      'failure',
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual([...server.stored.keys()].sort(), ['/a', '/c']);
    assert.deepEqual(await files(sessionDir), ['only-ok.dat']);
  });

  it('keeps uploaded outputs when removal is switched off', async (t) => {
    const config = stagingConfig({ cache: { enabled: false }, removeUploadedOutputs: false });
    const { server, sessionDir, run, write } = await setup(t, {}, config);
    await write('o', 'x');
    const r = await run([out('o', server.url('/o'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await files(sessionDir), ['o']);
  });

  it('uploads a directory output as a tree', async (t) => {
    const { server, sessionDir, run, write } = await setup(t);
    await write('res/a.txt', 'A');
    await write('res/sub/b.txt', 'B');
    await symlink('/etc/hostname', join(sessionDir, 'res', 'link'));
    const r = await run([out('res/', server.url('/up/res/', 'dav'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(
      [...server.stored.keys()].sort(),
      ['/up/res/a.txt', '/up/res/sub/b.txt'],
      'links are not uploaded',
    );
    assert.equal(r.files[0]?.bytes, 2);
    assert.deepEqual(await files(sessionDir), []);
  });

  it('expands a dynamic output list (@list)', async (t) => {
    const { server, sessionDir, run, write } = await setup(t, {});
    await write('list', `x.out ${server.url('/dyn/x.out')}\n\ny.out\n`);
    await write('x.out', 'X');
    await write('y.out', 'Y');
    await write('z.out', 'Z');
    const r = await run([out('@list')]);
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual([...server.stored.keys()], ['/dyn/x.out']);
    assert.deepEqual(await files(sessionDir), ['list', 'y.out']);
  });

  it('an https/http target whose parent is missing gets MKCOL after the 409, then the PUT again', async (t) => {
    const { server, run, write } = await setup(t);
    await write('o', 'x');
    const r = await run([out('o', server.url('/new/dir/o'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(server.count('PUT', '/new/dir/o'), 2);
    assert.ok(server.collections.has('/new/dir/'));
  });

  it('several outputs into one collection create it once', async (t) => {
    const { server, run, write } = await setup(t);
    for (const n of ['a', 'b', 'c']) await write(n, n);
    const r = await run(['a', 'b', 'c'].map((n) => out(n, server.url(`/col/${n}`, 'dav'))));
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(server.count('MKCOL', '/col/'), 1);
  });

  it('retries a 500 on PUT', async (t) => {
    const { server, run, write } = await setup(t, {});
    await write('o', 'x');
    server.fault('/o', { kind: 'status', status: 500 });
    const r = await run([out('o', server.url('/o'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(r.files[0]?.attempts, 2);
    assert.equal(server.count('PUT', '/o'), 2);
  });

  it('follows a 307 redirect on PUT, re-sending the body', async (t) => {
    const { server, run, write } = await setup(t, {});
    await write('o', 'body!');
    server.fault('/door/o', { kind: 'redirect', status: 307, location: '/pool/o' });
    const r = await run([out('o', server.url('/door/o'))]);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(server.stored.get('/pool/o')?.toString(), 'body!');
  });
});

describe('stage-out: failures', () => {
  it('403 on PUT is not retried; the output stays in the session', async (t) => {
    const { server, sessionDir, run, write } = await setup(t, { authorize: (r) => r.method !== 'PUT' });
    await write('o', 'x');
    const r = await run([out('o', server.url('/o'))]);
    assert.equal(r.ok, false);
    assert.equal(r.failureReason, `Failed to upload o to ${server.url('/o')}: 403 Forbidden`);
    assert.equal(server.count('PUT'), 1);
    assert.deepEqual(await files(sessionDir), ['o']);
    assert.deepEqual(r.control.outputStatus, []);
  });

  it('every output is tried even when one fails', async (t) => {
    const { server, run, write } = await setup(t, { authorize: (r) => r.path !== '/bad' });
    await write('a', 'a');
    await write('b', 'b');
    const r = await run([out('a', server.url('/bad')), out('b', server.url('/good'))]);
    assert.equal(r.ok, false);
    assert.deepEqual([...server.stored.keys()], ['/good']);
    assert.deepEqual(r.failures, [`Failed to upload a to ${server.url('/bad')}: 403 Forbidden`]);
  });

  it('a missing output fails its upload', async (t) => {
    const { server, run } = await setup(t, {});
    const r = await run([out('never-written', server.url('/n'))]);
    assert.equal(r.ok, false);
    assert.match(
      r.failureReason ?? '',
      /^Failed to upload never-written to http:\/\/\S+\/n: never-written: no such file in the session directory$/,
    );
  });

  it('an output that is a symbolic link is not uploaded (no reading outside the session)', async (t) => {
    const { server, sessionDir, root, run } = await setup(t, {});
    await writeFile(join(root, 'secret'), 'service secret');
    await symlink(join(root, 'secret'), join(sessionDir, 'out'));
    const r = await run([out('out', server.url('/o'))]);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_UNSAFE_PATH');
    assert.equal(server.count('PUT'), 0);
  });

  it('overwrite=no keeps an existing destination', async (t) => {
    const { server, run, write } = await setup(t, {});
    server.stored.set('/o', Buffer.from('old'));
    await write('o', 'new');
    const r = await run([out('o', server.url('/o'), onSuccess, { options: { overwrite: 'no' } })]);
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /the destination exists and overwrite=no was given$/);
    assert.equal(server.stored.get('/o')?.toString(), 'old');
  });

  it('a destination whose size differs after the upload fails', async (t) => {
    const { server, run, write } = await setup(t, { lieAboutStoredSize: 1 });
    await write('o', 'xyz');
    const r = await run([out('o', server.url('/o'))]);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_SIZE_MISMATCH');
    assert.equal(r.files[0]?.attempts, 4, 'retried as transient');
  });

  it('a collection that cannot be created fails with the MKCOL status', async (t) => {
    const { server, run, write } = await setup(t, { requireCollections: true, authorize: (r) => r.method !== 'MKCOL' });
    await write('o', 'x');
    const r = await run([out('o', server.url('/no/such/o', 'dav'))]);
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /cannot create the parent collection \(MKCOL answered 403\)$/);
  });

  it("'/' with a target and file URLs as targets are refused", async (t) => {
    const { run, write } = await setup(t, {});
    await write('o', 'x');
    const r = await run([out('/', 'https://se.example.org/all'), out('o', 'file:///tmp/o')]);
    assert.equal(r.ok, false);
    assert.deepEqual(
      r.files.map((f) => f.code),
      ['CE_ERR_STAGING_BAD_NAME', 'CE_ERR_STAGING_BAD_URL'],
    );
  });

  it('cancellation reports the uploads as cancelled', async (t) => {
    const { server, sessionDir, write } = await setup(t, {});
    await write('o', 'x');
    const ctl = new AbortController();
    ctl.abort();
    const stager = new Stager({
      config: stagingConfig({ cache: { enabled: false } }),
      credentials: anonymousCredentials,
    });
    const r = await stager.stageOut(
      { id: 'j', owner: 'o', sessionDir, files: [out('o', server.url('/o'))], outcome: 'success' },
      ctl.signal,
    );
    assert.equal(r.ok, false);
    assert.equal(r.cancelled, true);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CANCELLED');
    assert.equal(r.failureReason, 'o: Data staging cancelled');
    assert.equal(server.count('PUT'), 0);
  });
});
