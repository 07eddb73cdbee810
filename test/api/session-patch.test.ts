// PATCH of session files (a Ceres extension, docs/sessions.md "PATCH"): bytes written in
// place into an existing file at its Content-Range or offset=, with the checks of PUT
// (links, ownership, quota, disk marks); a request that cannot say where its bytes go is a
// 400, a missing file a 404. PATCH anywhere else stays a 405.
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { A, B, makeFixture, type Fixture } from '../sessions/fixture.js';
import type { AreaStatus } from '../../src/health/disk-space.js';
import { until } from '../helpers/poll.js';

const J = { ...A, accept: 'application/json' };

describe('PATCH on session files', () => {
  let f: Fixture;
  let id: string;
  let dir: string;
  let low: AreaStatus[] = [];
  before(async () => {
    f = await makeFixture({ maxUploadBytesPerJob: 1000, diskLow: () => low });
  });
  beforeEach(async () => {
    id = await f.newJob(A['x-test-dn']);
    dir = f.sessionDir(id);
    await writeFile(join(dir, 'data'), '0123456789');
    low = [];
  });
  after(() => f.close());

  const patch = (path: string, payload: string, headers: Record<string, string> = {}, query = '') =>
    f.app.inject({ method: 'PATCH', url: f.url(id, path) + query, headers: { ...J, ...headers }, payload });
  const code = (r: { body: string }) => (JSON.parse(r.body) as { code: string }).code;

  it('Content-Range: the bytes are written in place, the rest of the file kept; 204', async () => {
    const r = await patch('data', 'abc', { 'content-range': 'bytes 2-4/*' });
    assert.equal(r.statusCode, 204, r.body);
    assert.equal(r.body, '');
    assert.equal(await readFile(join(dir, 'data'), 'utf8'), '01abc56789');
  });

  it('offset=: the range is the offset and the body length; past the end the file grows', async () => {
    assert.equal((await patch('data', 'XY', {}, '?offset=0')).statusCode, 204);
    assert.equal((await patch('data', 'END', {}, '?offset=10')).statusCode, 204);
    assert.equal(await readFile(join(dir, 'data'), 'utf8'), 'XY23456789END');
  });

  it('a missing file is a 404 and nothing is created: PATCH modifies, PUT creates', async () => {
    const r = await patch('nothere', 'x', {}, '?offset=0');
    assert.equal(r.statusCode, 404);
    await assert.rejects(readFile(join(dir, 'nothere')));
  });

  for (const [what, headers, query, want] of [
    ['neither Content-Range nor offset', {}, '', 'CE_ERR_SESSION_PATCH_RANGE'],
    ['both', { 'content-range': 'bytes 0-0/*' }, '?offset=0', 'CE_ERR_SESSION_PATCH_RANGE'],
    ['offset=-1', {}, '?offset=-1', 'CE_ERR_SESSION_PATCH_RANGE'],
    ['offset=abc', {}, '?offset=abc', 'CE_ERR_SESSION_PATCH_RANGE'],
    ['a malformed Content-Range', { 'content-range': 'bytes 5-2/*' }, '', 'CE_ERR_SESSION_BAD_CONTENT_RANGE'],
    ['a Content-Range of another unit', { 'content-range': 'lines 0-1/*' }, '', 'CE_ERR_SESSION_BAD_CONTENT_RANGE'],
    ['a body longer than its range', { 'content-range': 'bytes 0-0/*' }, '', 'CE_ERR_SESSION_BODY_LENGTH'],
  ] as const)
    it(`${what}: 400 ${want}, the file untouched`, async () => {
      const r = await patch('data', 'zz', headers, query);
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(code(r), want);
      assert.equal(await readFile(join(dir, 'data'), 'utf8'), '0123456789');
    });

  it('an empty body with offset= is a 400: nothing to write says nothing of where', async () => {
    const r = await patch('data', '', {}, '?offset=3');
    assert.equal(r.statusCode, 400);
    assert.equal(code(r), 'CE_ERR_SESSION_PATCH_RANGE');
  });

  it('never through a link: a symlink to a file outside is a 403 and the target is untouched', async () => {
    const outside = join(f.root, 'outside.txt');
    await writeFile(outside, 'secret');
    await symlink(outside, join(dir, 'link'));
    const r = await patch('link', 'x', {}, '?offset=0');
    assert.equal(r.statusCode, 403, r.body);
    assert.equal(await readFile(outside, 'utf8'), 'secret');
  });

  it('a directory is a 409, the session directory itself too', async () => {
    await mkdir(join(dir, 'sub'));
    assert.equal((await patch('sub', 'x', {}, '?offset=0')).statusCode, 409);
    const root = await f.app.inject({
      method: 'PATCH',
      url: f.url(id, ''),
      headers: J,
      payload: 'x',
      query: { offset: '0' },
    });
    assert.equal(root.statusCode, 409);
  });

  it("another user's job is a 404, as for PUT", async () => {
    const r = await f.app.inject({
      method: 'PATCH',
      url: `${f.url(id, 'data')}?offset=0`,
      headers: { ...B, accept: 'application/json' },
      payload: 'x',
    });
    assert.equal(r.statusCode, 404);
    assert.equal(await readFile(join(dir, 'data'), 'utf8'), '0123456789');
  });

  it("past the job's upload quota: 413, as for PUT", async () => {
    const r = await patch('data', 'q'.repeat(1001), {}, '?offset=0');
    assert.equal(r.statusCode, 413, r.body);
    assert.equal(code(r), 'CE_ERR_SESSION_JOB_QUOTA');
  });

  it('a file the job renames away while the bytes arrive still counts against the quota', async () => {
    // The hostile job moves the file aside mid-write: the bytes land in the moved file,
    // and the quota must count them, not what the name holds afterwards (nothing). Else
    // every PATCH so raced is free and the quota bounds nothing.
    const body = new PassThrough();
    const answer = f.app.inject({
      method: 'PATCH',
      url: `${f.url(id, 'data')}?offset=0`,
      headers: { ...J, 'content-length': '600' },
      payload: body,
    });
    body.write('a'.repeat(300));
    await until(async () => (await stat(join(dir, 'data'))).size >= 300, 'the first bytes written', 10_000);
    await rename(join(dir, 'data'), join(dir, 'moved'));
    body.end('b'.repeat(300));
    assert.equal((await answer).statusCode, 204);
    assert.equal((await stat(join(dir, 'moved'))).size, 600);
    await writeFile(join(dir, 'data2'), '');
    const r = await patch('data2', 'c'.repeat(600), {}, '?offset=0');
    assert.equal(r.statusCode, 413, 'the raced 600 bytes and these 600 exceed the quota of 1000');
    assert.equal(code(r), 'CE_ERR_SESSION_JOB_QUOTA');
  });

  it('below the disk low-water mark: 507 before the body is read, as for PUT', async () => {
    low = [{ area: 'sessions', path: f.root, freeBytes: 1, totalBytes: 100, lowWaterBytes: 10, low: true }];
    const r = await patch('data', 'abc', {}, '?offset=0');
    assert.equal(r.statusCode, 507, r.body);
    assert.equal(code(r), 'CE_ERR_DISK_LOW_SPACE');
    assert.equal(await readFile(join(dir, 'data'), 'utf8'), '0123456789');
  });

  it('PATCH of anything else stays a 405 with Allow (the diagnose files)', async () => {
    for (const url of [f.url(id, '').replace(/\/session\/?$/, '/diagnose/errors')]) {
      const r = await f.app.inject({ method: 'PATCH', url, headers: J, payload: 'x' });
      assert.equal(r.statusCode, 405, url);
      assert.ok(!String(r.headers.allow).includes('PATCH'));
    }
  });
});
