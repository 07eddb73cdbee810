// Stage-in against a real HTTP server on loopback, with injected failures.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import type { StageInFile, StageInJob, StageProgress } from '../../src/staging/types.js';
import { patternBuffer, TestServer } from './helpers/test-server.js';
import { never, recordingLogger, stagingConfig, tempDir } from './helpers/fixtures.js';
import { createHasher } from '../../src/staging/checksum.js';
import { ceError } from '../../src/errors/ce-error.js';

type T = Parameters<typeof tempDir>[0];

async function setup(t: T, config = stagingConfig({ cache: { enabled: false } })) {
  const server = await TestServer.start();
  t.after(() => server.close());
  const root = await tempDir(t);
  const sessionDir = join(root, 'session');
  await mkdir(sessionDir);
  const logger = recordingLogger();
  const stager = new Stager({ config, credentials: anonymousCredentials, logger });
  const job = (files: StageInFile[], extra: Partial<StageInJob> = {}): StageInJob => ({
    id: 'job1',
    owner: '/CN=alice',
    sessionDir,
    files,
    ...extra,
  });
  return { server, root, sessionDir, stager, job, logger };
}

const input = (name: string, source: string | undefined, extra: Partial<StageInFile> = {}): StageInFile => ({
  name,
  executable: false,
  ...(source === undefined ? {} : { source }),
  ...extra,
});
const sum = (algo: 'adler32' | 'md5' | 'sha256', b: Buffer): string => {
  const h = createHasher(algo);
  h.update(b);
  return `${algo}:${h.digest()}`;
};

describe('stage-in: happy paths', () => {
  it('downloads every input into the session, creating directories and setting the executable bit', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    const a = patternBuffer(300_000);
    server.resources.set('/data/a.bin', { body: a, etag: '"a1"' });
    server.resources.set('/bin/run.sh', { body: Buffer.from('#!/bin/sh\necho hi\n') });
    const progress: StageProgress[] = [];
    const r = await stager.stageIn(
      job([
        input('in/a.bin', server.url('/data/a.bin')),
        input('run.sh', server.url('/bin/run.sh'), { executable: true }),
      ]),
      never,
      (p) => progress.push(p),
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await readFile(join(sessionDir, 'in/a.bin')), a);
    assert.equal((await stat(join(sessionDir, 'run.sh'))).mode & 0o111, 0o111);
    assert.equal((await stat(join(sessionDir, 'in/a.bin'))).mode & 0o111, 0);
    assert.deepEqual(
      r.files.map((f) => [f.name, f.ok, f.bytes, f.attempts]),
      [
        ['in/a.bin', true, 300_000, 1],
        ['run.sh', true, 18, 1],
      ],
    );
    assert.deepEqual(r.control.inputStatus, ['/in/a.bin', '/run.sh']);
    assert.match(
      r.control.statistics[0] ?? '',
      new RegExp(
        `^inputfile:url=http://127\\.0\\.0\\.1:${server.port}/data/a\\.bin,size=300000,starttime=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ,endtime=\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`,
      ),
    );
    assert.equal(r.bytes, 300_018);
    const last = progress.filter((p) => p.name === 'in/a.bin').at(-1);
    assert.equal(last?.fileBytes, 300_000);
    assert.equal(Math.max(...progress.map((p) => p.jobBytes)), 300_018);
    // No temporary files are left behind.
    assert.deepEqual((await readdir(sessionDir)).sort(), ['in', 'run.sh']);
  });

  it('dav:// is fetched over http and matching checksums of every kind are accepted', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    const b = patternBuffer(70_000);
    server.resources.set('/f', { body: b });
    const files = (['adler32', 'md5', 'sha256'] as const).map((a) =>
      input(`f.${a}`, server.url('/f', 'dav'), { checksum: sum(a, b), size: b.length }),
    );
    const r = await stager.stageIn(job(files), never);
    assert.equal(r.ok, true, r.failureReason);
    for (const a of ['adler32', 'md5', 'sha256']) assert.deepEqual(await readFile(join(sessionDir, `f.${a}`)), b);
  });

  it('follows redirects (relative and absolute)', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    server.resources.set('/final', { body: Buffer.from('landed') });
    server.fault('/r1', { kind: 'redirect', status: 302, location: '/r2' });
    server.fault('/r2', { kind: 'redirect', status: 307, location: server.url('/final') });
    const r = await stager.stageIn(job([input('x', server.url('/r1'))]), never);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(await readFile(join(sessionDir, 'x'), 'utf8'), 'landed');
  });

  it('retries 500s and 503 with Retry-After, then succeeds', async (t) => {
    const { server, stager, job } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('eventually') });
    server.fault(
      '/f',
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503, headers: { 'retry-after': '0' } },
    );
    const r = await stager.stageIn(job([input('f', server.url('/f'))]), never);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(r.files[0]?.attempts, 3);
    assert.equal(server.count('GET', '/f'), 3);
  });

  it('a connection reset mid-body is retried and resumed with a Range request', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    const b = patternBuffer(3_000_000);
    server.resources.set('/big', { body: b, etag: '"v1"' });
    server.fault('/big', { kind: 'reset', afterBytes: 1_200_000 });
    const r = await stager.stageIn(job([input('big', server.url('/big'), { checksum: sum('adler32', b) })]), never);
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(await readFile(join(sessionDir, 'big')), b);
    const ranged = server.hits.filter((h) => h.path === '/big' && h.range !== undefined);
    assert.equal(ranged.length, 1, 'the second attempt resumed');
    assert.match(ranged[0]?.range ?? '', /^bytes=[1-9]\d*-$/);
  });

  it('a body cut short (server closes before Content-Length) is retried', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    const b = patternBuffer(50_000);
    server.resources.set('/f', { body: b, acceptRanges: false });
    server.fault('/f', { kind: 'shortBody', bytes: 1000 });
    const r = await stager.stageIn(job([input('f', server.url('/f'))]), never);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(r.files[0]?.attempts, 2);
    assert.deepEqual(await readFile(join(sessionDir, 'f')), b);
  });

  it('file:// sources are copied when the configuration allows them', async (t) => {
    const { root, sessionDir, job } = await setup(t);
    const src = join(root, 'local.dat');
    await writeFile(src, 'local data');
    const stager = new Stager({
      config: stagingConfig({ allowFileUrls: true, cache: { enabled: false } }),
      credentials: anonymousCredentials,
    });
    const r = await stager.stageIn(
      job([input('l', pathToFileURL(src).href, { checksum: sum('md5', Buffer.from('local data')) })]),
      never,
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(await readFile(join(sessionDir, 'l'), 'utf8'), 'local data');
  });
});

describe('stage-in: failures', () => {
  it('a file:// input swapped for a link while it is written changes no other file and fails', async (t) => {
    // The session directory is the job's account's: a process of that account can replace
    // the file being written with a link. The mode is set through a descriptor (before: a
    // chmod by path, which followed the link to a file the account does not own).
    const { root, sessionDir, job } = await setup(t);
    const fifo = join(root, 'slow-source');
    execFileSync('mkfifo', [fifo]);
    const canary = join(root, 'not-the-jobs');
    await writeFile(canary, 'secret', { mode: 0o600 });
    const stager = new Stager({
      config: stagingConfig({ allowFileUrls: true, cache: { enabled: false } }),
      credentials: anonymousCredentials,
    });
    const staged = stager.stageIn(job([input('l', pathToFileURL(fifo).href, { executable: true })]), never);
    let part: string | undefined;
    for (let i = 0; i < 500 && part === undefined; i++) {
      part = (await readdir(sessionDir)).find((n) => n.includes('.ceres-part-'));
      if (part === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(part, 'the part file appears while the source is read');
    await rm(join(sessionDir, part));
    await symlink(canary, join(sessionDir, part));
    await writeFile(fifo, 'data'); // opens, writes and closes the pipe: the copy ends
    const r = await staged;
    assert.equal((await stat(canary)).mode & 0o777, 0o600, 'the linked file keeps its mode');
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /replaced/);
  });

  it('404 is not retried and gives a reason a user can act on', async (t) => {
    const { server, stager, job } = await setup(t);
    const r = await stager.stageIn(job([input('x', server.url('/missing'))]), never);
    assert.equal(r.ok, false);
    assert.equal(r.failureReason, `Failed to download ${server.url('/missing')}: 404 Not Found`);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_REMOTE_STATUS');
    assert.equal(r.files[0]?.attempts, 1);
    assert.equal(server.count('GET', '/missing'), 1);
    assert.deepEqual(r.control.inputStatus, []);
  });

  it('403 and 401 are not retried', async (t) => {
    const { server, stager, job } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('x') });
    server.fault('/f', { kind: 'status', status: 403 });
    server.resources.set('/g', { body: Buffer.from('x') });
    server.fault('/g', { kind: 'status', status: 401 });
    const r1 = await stager.stageIn(job([input('f', server.url('/f'))]), never);
    const r2 = await stager.stageIn(job([input('g', server.url('/g'))]), never);
    assert.match(r1.failureReason ?? '', /: 403 Forbidden$/);
    assert.match(r2.failureReason ?? '', /: 401 Unauthorized$/);
    assert.equal(server.count('GET', '/f') + server.count('GET', '/g'), 2);
  });

  it('persistent 500s exhaust the attempts', async (t) => {
    const { server, stager, job } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('x') });
    for (let i = 0; i < 10; i++) server.fault('/f', { kind: 'status', status: 500 });
    const r = await stager.stageIn(job([input('f', server.url('/f'))]), never);
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /500 Internal Server Error$/);
    assert.equal(r.files[0]?.attempts, 4);
    assert.equal(server.count('GET', '/f'), 4);
  });

  it('a refused connection is retried, then reported', async (t) => {
    const { server, stager, job } = await setup(t);
    const url = server.url('/f');
    await server.close();
    const r = await stager.stageIn(job([input('f', url)]), never);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.attempts, 4);
    assert.equal(r.failureReason, `Failed to download ${url}: connection refused`);
  });

  it('slow response headers time out (and are retried)', async (t) => {
    const config = stagingConfig({
      cache: { enabled: false },
      timeouts: { headersSeconds: 0.3 },
      retry: { maxAttempts: 2 },
    });
    const { server, stager, job } = await setup(t, config);
    server.resources.set('/slow', { body: Buffer.from('late') });
    server.fault('/slow', { kind: 'delayHeaders', ms: 3000 }, { kind: 'delayHeaders', ms: 3000 });
    const r = await stager.stageIn(job([input('s', server.url('/slow'))]), never);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_TIMEOUT');
    assert.match(r.failureReason ?? '', /timed out waiting for the response$/);
    assert.equal(r.files[0]?.attempts, 2);
  });

  it('a body that stalls longer than the idle timeout fails as a timeout', async (t) => {
    const config = stagingConfig({
      cache: { enabled: false },
      timeouts: { idleSeconds: 0.3 },
      retry: { maxAttempts: 1 },
    });
    const { server, sessionDir, stager, job } = await setup(t, config);
    server.resources.set('/stall', { body: patternBuffer(100_000), acceptRanges: false });
    server.fault('/stall', { kind: 'stall', afterBytes: 10_000, ms: 5000 });
    const r = await stager.stageIn(job([input('s', server.url('/stall'))]), never);
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /transfer stalled/);
    assert.deepEqual(await readdir(sessionDir), [], 'the half-downloaded file is removed');
  });

  it('a size different from the expected one fails without a retry and leaves no file', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    server.resources.set('/f', { body: patternBuffer(1000) });
    const r = await stager.stageIn(job([input('f', server.url('/f'), { size: 999 })]), never);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_SIZE_MISMATCH');
    assert.match(r.failureReason ?? '', /size mismatch: the server has 1000 bytes, 999 expected$/);
    assert.equal(server.count('GET', '/f'), 1);
    assert.deepEqual(await readdir(sessionDir), []);
  });

  it('a server without Content-Length sending more than the expected size is stopped', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    server.resources.set('/f', { body: patternBuffer(5000), chunked: true });
    const r = await stager.stageIn(job([input('f', server.url('/f'), { size: 4000 })]), never);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_SIZE_MISMATCH');
    assert.deepEqual(await readdir(sessionDir), []);
  });

  for (const algo of ['adler32', 'md5', 'sha256'] as const) {
    it(`a wrong ${algo} checksum fails without a retry and removes the file`, async (t) => {
      const { server, sessionDir, stager, job } = await setup(t);
      const b = patternBuffer(20_000);
      server.resources.set('/f', { body: b });
      const wrong = sum(algo, Buffer.concat([b, Buffer.from('x')]));
      const r = await stager.stageIn(job([input('f', server.url('/f'), { checksum: wrong })]), never);
      assert.equal(r.ok, false);
      assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH');
      assert.match(r.failureReason ?? '', new RegExp(`checksum mismatch: ${sum(algo, b)}, ${wrong} expected$`));
      assert.equal(server.count('GET', '/f'), 1);
      assert.deepEqual(await readdir(sessionDir), []);
    });
  }

  it('a malformed checksum in the description fails before any transfer', async (t) => {
    const { server, stager, job } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await stager.stageIn(job([input('f', server.url('/f'), { checksum: 'crc99:1234' })]), never);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_BAD_CHECKSUM');
    assert.equal(server.count('GET'), 0);
  });

  it('the URL option checksum=type:value is verified too; a malformed one fails before any transfer', async (t) => {
    const { server, stager, job } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('x') });
    const wrong = await stager.stageIn(
      job([input('f', server.url('/f'), { options: { checksum: 'adler32:00000001' } })]),
      never,
    );
    assert.equal(wrong.files[0]?.code, 'CE_ERR_STAGING_CHECKSUM_MISMATCH');
    const bad = await stager.stageIn(
      job([input('g', server.url('/f'), { options: { checksum: 'adler32:zz' } })]),
      never,
    );
    assert.equal(bad.files[0]?.code, 'CE_ERR_STAGING_BAD_CHECKSUM');
    assert.equal(server.count('GET'), 1);
  });

  it('a redirect loop is bounded', async (t) => {
    const config = stagingConfig({ cache: { enabled: false }, maxRedirects: 5 });
    const { server, stager, job } = await setup(t, config);
    server.redirects.set('/loop', { status: 302, location: '/loop' });
    const r = await stager.stageIn(job([input('x', server.url('/loop'))]), never);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_REDIRECT');
    assert.match(r.failureReason ?? '', /too many redirects/);
    assert.equal(server.count('GET', '/loop'), 6);
  });

  it('a redirect to another protocol is refused (https to http: see the credentials tests)', async (t) => {
    const { server, stager, job } = await setup(t);
    server.fault('/x', { kind: 'redirect', status: 301, location: 'ftp://elsewhere/x' });
    const r = await stager.stageIn(job([input('x', server.url('/x'))]), never);
    assert.match(r.failureReason ?? '', /redirect to an unsupported protocol/);
  });

  it('file:// sources are refused by default', async (t) => {
    const { stager, job } = await setup(t);
    const r = await stager.stageIn(job([input('p', 'file:///etc/passwd')]), never);
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_FILE_URL_DENIED');
  });

  it('unsupported protocols and names leaving the session are refused', async (t) => {
    const { server, stager, job, root } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('x') });
    const r1 = await stager.stageIn(job([input('x', 'gsiftp://se.example.org/x')]), never);
    assert.equal(r1.files[0]?.code, 'CE_ERR_STAGING_BAD_URL');
    assert.match(r1.failureReason ?? '', /Unsupported protocol 'gsiftp'/);
    const r2 = await stager.stageIn(job([input('../escape', server.url('/f'))]), never);
    assert.equal(r2.files[0]?.code, 'CE_ERR_STAGING_BAD_NAME');
    assert.deepEqual((await readdir(root)).sort(), ['session']);
    assert.equal(server.count('GET'), 0);
  });

  it('a symlinked directory in the session is not written through', async (t) => {
    const { server, stager, job, sessionDir, root } = await setup(t);
    const { symlink } = await import('node:fs/promises');
    await mkdir(join(root, 'elsewhere'));
    await symlink(join(root, 'elsewhere'), join(sessionDir, 'sub'));
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await stager.stageIn(job([input('sub/f', server.url('/f'))]), never);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_UNSAFE_PATH');
    assert.deepEqual(await readdir(join(root, 'elsewhere')), []);
  });

  it('the first permanent failure stops the other downloads; complete inputs stay, partial ones go', async (t) => {
    const config = stagingConfig({ cache: { enabled: false }, maxTransfersPerJob: 2, timeouts: { idleSeconds: 30 } });
    const { server, sessionDir, stager, job } = await setup(t, config);
    server.resources.set('/ok', { body: Buffer.from('fine') });
    server.resources.set('/slow', { body: patternBuffer(200_000), acceptRanges: false });
    server.fault('/slow', { kind: 'stall', afterBytes: 100_000, ms: 20_000 });
    server.resources.set('/later', { body: Buffer.from('never fetched') });
    server.fault('/bad', { kind: 'delayHeaders', ms: 300 });
    const r = await stager.stageIn(
      job([
        input('ok', server.url('/ok')),
        input('slow', server.url('/slow')),
        input('bad', server.url('/bad')),
        input('later', server.url('/later')),
      ]),
      never,
    );
    assert.equal(r.ok, false);
    assert.equal(r.cancelled, false);
    assert.equal(r.failureReason, `Failed to download ${server.url('/bad')}: 404 Not Found`);
    assert.deepEqual(r.failures, [r.failureReason]);
    const byName = new Map(r.files.map((f) => [f.name, f]));
    assert.equal(byName.get('ok')?.ok, true);
    assert.equal(byName.get('slow')?.code, 'CE_ERR_STAGING_SKIPPED');
    assert.equal(byName.get('later')?.code, 'CE_ERR_STAGING_SKIPPED');
    assert.equal(server.count('GET', '/later'), 0);
    assert.deepEqual(await readdir(sessionDir), ['ok']);
    assert.deepEqual(r.control.inputStatus, ['/ok']);
  });

  it('cancellation stops transfers, reports them as cancelled and cleans up', async (t) => {
    const { server, sessionDir, stager, job } = await setup(t);
    server.resources.set('/slow', { body: patternBuffer(200_000), acceptRanges: false });
    server.fault('/slow', { kind: 'stall', afterBytes: 50_000, ms: 20_000 });
    const ctl = new AbortController();
    const p = stager.stageIn(job([input('slow', server.url('/slow'))]), ctl.signal, () => ctl.abort());
    const r = await p;
    assert.equal(r.ok, false);
    assert.equal(r.cancelled, true);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_CANCELLED');
    assert.deepEqual(await readdir(sessionDir), []);
    assert.equal(stager.stats().in.active, 0);
    assert.equal(stager.stats().downloads.active, 0);
  });

  it('error texts and logs carry no URL secrets', async (t) => {
    const { server, stager, job, logger } = await setup(t);
    const url = `${server.url('/missing')}?X-Amz-Signature=topsecret42&id=7`;
    const r = await stager.stageIn(job([input('x', url)]), never);
    assert.equal(r.ok, false);
    assert.doesNotMatch(JSON.stringify(r), /topsecret42/);
    assert.doesNotMatch(logger.text(), /topsecret42/);
    assert.match(r.failureReason ?? '', /id=7/);
  });
});

describe('stage-in: the session directory, held for the job', () => {
  it("a job's downloads take the session once while they run, not once per file, and hold it no longer", async (t) => {
    const { server, sessionDir, stager } = await setup(t);
    const files = Array.from({ length: 12 }, (_, i) => {
      server.resources.set(`/f${i}`, { body: Buffer.from(`file ${i}`) });
      return input(i % 2 === 0 ? `f${i}` : `sub/f${i}`, server.url(`/f${i}`));
    });
    let taken = 0;
    let held = 0;
    const session = async <R>(fn: (dir: string) => Promise<R>): Promise<R> => {
      taken++;
      held++;
      try {
        return await fn(sessionDir);
      } finally {
        held--;
      }
    };
    const r = await stager.stageIn({ id: 'held', owner: '/CN=alice', session, files }, never);
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(taken, 1, 'one lease for the twelve downloads');
    assert.equal(held, 0);
    for (const [i, f] of files.entries()) assert.equal(await readFile(join(sessionDir, f.name), 'utf8'), `file ${i}`);
  });

  it('a session its lease refuses: the inputs fail with the reason of the refusal, not as skipped', async (t) => {
    const { server, stager } = await setup(t);
    server.resources.set('/f', { body: Buffer.from('x') });
    const session = (): Promise<never> =>
      Promise.reject(ceError('CE_ERR_SESSION_REPLACED', 'The session directory of job refused was replaced by a link'));
    const r = await stager.stageIn(
      {
        id: 'refused',
        owner: '/CN=alice',
        session,
        files: [input('a', server.url('/f')), input('b', server.url('/f'))],
      },
      never,
    );
    assert.equal(r.ok, false);
    assert.match(r.failureReason ?? '', /replaced by a link/);
    assert.equal(server.count('GET', '/f'), 0, 'nothing fetched');
  });

  it('a session directory removed while its downloads run: they fail and nothing is made at its path again', async (t) => {
    const config = stagingConfig({ cache: { enabled: false }, maxTransfersPerJob: 1 });
    const { server, sessionDir, stager, job } = await setup(t, config);
    server.resources.set('/a', { body: Buffer.from('first') });
    server.resources.set('/b', { body: Buffer.from('second') });
    server.fault('/b', { kind: 'delayHeaders', ms: 200 });
    let removed = false;
    const r = await stager.stageIn(job([input('a', server.url('/a')), input('d/b', server.url('/b'))]), never, () => {
      if (removed) return;
      removed = true;
      // The job cleaned meanwhile: while the first input is written (its file is open).
      rmSync(sessionDir, { recursive: true, force: true });
    });
    assert.equal(removed, true);
    assert.equal(r.ok, false);
    assert.equal(
      r.files.some((f) => f.ok),
      false,
    );
    await assert.rejects(stat(sessionDir), /ENOENT/, 'the session directory was not made again');
  });
});

describe('stage-in: concurrency limits', () => {
  it('jobs beyond maxJobsStagingIn wait for a slot, visibly', async (t) => {
    const config = stagingConfig({ cache: { enabled: false }, maxJobsStagingIn: 1 });
    const { server, sessionDir, stager, job } = await setup(t, config);
    server.resources.set('/slow', { body: patternBuffer(100_000), acceptRanges: false });
    server.fault('/slow', { kind: 'stall', afterBytes: 10_000, ms: 1500 });
    server.resources.set('/quick', { body: Buffer.from('q') });
    assert.equal(stager.canStart('in'), true);
    let sawSlowBytes!: () => void;
    const started = new Promise<void>((r) => (sawSlowBytes = r));
    const first = stager.stageIn(job([input('a', server.url('/slow'))]), never, () => sawSlowBytes());
    await started;
    assert.equal(stager.canStart('in'), false);
    const other = join(sessionDir, '..', 'session2');
    await mkdir(other);
    const second = stager.stageIn({ ...job([input('b', server.url('/quick'))]), id: 'job2', sessionDir: other }, never);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(stager.stats().in, { active: 1, queued: 1, limit: 1 });
    assert.equal(server.count('GET', '/quick'), 0, 'the second job has not started');
    const [r1, r2] = await Promise.all([first, second]);
    assert.equal(r1.ok && r2.ok, true);
    assert.deepEqual(stager.stats().in, { active: 0, queued: 0, limit: 1 });
    assert.equal(
      createHash('sha256')
        .update(await readFile(join(sessionDir, 'a')))
        .digest('hex'),
      createHash('sha256').update(patternBuffer(100_000)).digest('hex'),
    );
  });
});
