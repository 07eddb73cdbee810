import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';

describe('GET/HEAD on session files and directories', () => {
  let f: Fixture;
  let id: string;
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(A['x-test-dn']);
    const d = f.sessionDir(id);
    await writeFile(join(d, 'out.txt'), 'hello\n');
    await writeFile(join(d, 'empty'), '');
    await mkdir(join(d, 'sub', 'dir'), { recursive: true });
    await writeFile(join(d, 'sub', 'deep.txt'), 'deep');
    await writeFile(join(d, 'b.bin'), Buffer.alloc(1000, 7));
    await symlink('/etc/passwd', join(d, 'zz-link'));
  });
  after(() => f.close());

  it('GET file: 200 octet-stream with length, Accept-Ranges and Last-Modified', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'out.txt'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, 'hello\n');
    assert.equal(r.headers['content-type'], 'application/octet-stream');
    assert.equal(r.headers['content-length'], '6');
    assert.equal(r.headers['accept-ranges'], 'bytes');
    assert.match(String(r.headers['last-modified']), /GMT$/);
  });

  it('works on 1.0 too, and for a file in a sub-directory', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'sub/deep.txt', '1.0'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, 'deep');
  });

  it('HEAD file: the headers of GET, no body', async () => {
    const r = await f.app.inject({ method: 'HEAD', url: f.url(id, 'out.txt'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-length'], '6');
    assert.equal(r.headers['content-type'], 'application/octet-stream');
    assert.equal(r.body, '');
  });

  it('an empty file is 200 with Content-Length 0', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'empty'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-length'], '0');
    assert.equal(r.body, '');
  });

  it('Range bytes=a-b: 206 with Content-Range (A-REX transcript)', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'out.txt'), headers: { ...A, range: 'bytes=1-3' } });
    assert.equal(r.statusCode, 206);
    assert.equal(r.body, 'ell');
    assert.equal(r.headers['content-range'], 'bytes 1-3/6');
    assert.equal(r.headers['content-length'], '3');
  });

  it('Range bytes=a- and the suffix bytes=-n are served as 206', async () => {
    let r = await f.app.inject({ method: 'GET', url: f.url(id, 'b.bin'), headers: { ...A, range: 'bytes=990-' } });
    assert.equal(r.statusCode, 206);
    assert.equal(r.rawPayload.length, 10);
    assert.equal(r.headers['content-range'], 'bytes 990-999/1000');
    r = await f.app.inject({ method: 'GET', url: f.url(id, 'out.txt'), headers: { ...A, range: 'bytes=-3' } });
    assert.equal(r.statusCode, 206);
    assert.equal(r.body, 'lo\n');
    assert.equal(r.headers['content-range'], 'bytes 3-5/6');
  });

  it('an unsatisfiable range is 416 with Content-Range bytes */size', async () => {
    for (const range of ['bytes=6-', 'bytes=100-200', 'bytes=-0']) {
      const r = await f.app.inject({
        method: 'GET',
        url: f.url(id, 'out.txt'),
        headers: { ...A, range, accept: 'application/json' },
      });
      assert.equal(r.statusCode, 416, range);
      assert.equal(r.headers['content-range'], 'bytes */6');
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_RANGE_NOT_SATISFIABLE');
    }
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'empty'), headers: { ...A, range: 'bytes=0-' } });
    assert.equal(r.statusCode, 416);
    assert.equal(r.headers['content-range'], 'bytes */0');
  });

  it('malformed or multiple ranges are ignored: the whole file with 200', async () => {
    for (const range of ['bytes=3-1', 'bytes=abc', 'bytes=0-1,3-4', 'lines=1-2']) {
      const r = await f.app.inject({ method: 'GET', url: f.url(id, 'out.txt'), headers: { ...A, range } });
      assert.equal(r.statusCode, 200, range);
      assert.equal(r.body, 'hello\n');
      assert.equal(r.headers['content-range'], undefined);
    }
  });

  it('HEAD ignores Range (defined for GET only)', async () => {
    const r = await f.app.inject({ method: 'HEAD', url: f.url(id, 'out.txt'), headers: { ...A, range: 'bytes=1-3' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-length'], '6');
  });

  it('directory listing in XML: A-REX shape with sizes, files then dirs, sorted, no links', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id), headers: { ...A, accept: 'text/xml' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/xml');
    assert.equal(
      r.body,
      '<list><file size="1000">b.bin</file><file size="0">empty</file><file size="6">out.txt</file><dir>sub</dir></list>',
    );
  });

  it('directory listing in JSON: file and dir arrays of names (pyarcrest), sizes in entry', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, ''), headers: { ...A, accept: 'application/json' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const j = JSON.parse(r.body);
    assert.deepEqual(Object.keys(j), ['file', 'dir', 'entry']);
    assert.deepEqual(j.file, ['b.bin', 'empty', 'out.txt']);
    assert.deepEqual(j.dir, ['sub']);
    assert.deepEqual(
      j.entry.map((e: Record<string, string>) => [e.name, e.type, e.size]),
      [
        ['b.bin', 'file', '1000'],
        ['empty', 'file', '0'],
        ['out.txt', 'file', '6'],
        ['sub', 'dir', undefined],
      ],
    );
    assert.match(j.entry[0].modified, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('a single file and a single directory are still arrays in JSON; an empty directory gives []', async () => {
    let r = await f.app.inject({ method: 'GET', url: f.url(id, 'sub'), headers: { ...A, accept: 'application/json' } });
    let j = JSON.parse(r.body);
    assert.deepEqual(j.file, ['deep.txt']);
    assert.deepEqual(j.dir, ['dir']);
    r = await f.app.inject({
      method: 'GET',
      url: f.url(id, 'sub/dir/'),
      headers: { ...A, accept: 'application/json' },
    });
    j = JSON.parse(r.body);
    assert.deepEqual(j, { file: [], dir: [], entry: [] });
  });

  it('directory listing in HTML for browsers: escaped, with links', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'sub/'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(r.body, new RegExp(`<a href="/arex/rest/1.1/jobs/${id}/session/sub/deep.txt">deep.txt</a>`));
    assert.match(r.body, new RegExp(`<a href="/arex/rest/1.1/jobs/${id}/session/sub/dir/">dir/</a>`));
  });

  it('HEAD on a directory: listing headers, no body', async () => {
    const g = await f.app.inject({ method: 'GET', url: f.url(id), headers: { ...A, accept: 'application/json' } });
    const h = await f.app.inject({ method: 'HEAD', url: f.url(id), headers: { ...A, accept: 'application/json' } });
    assert.equal(h.statusCode, 200);
    assert.equal(h.body, '');
    assert.equal(h.headers['content-length'], g.headers['content-length']);
  });

  it('a missing file is 404 Not found; a file with a trailing slash too', async () => {
    for (const p of ['nosuchfile', 'sub/nosuch/x', 'out.txt/', 'out.txt/x']) {
      const r = await f.app.inject({ method: 'GET', url: f.url(id, p), headers: { ...A, accept: 'application/json' } });
      assert.equal(r.statusCode, 404, p);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_NOT_FOUND');
    }
  });

  it('a missing job is 404 Job not found; so is a malformed job id', async () => {
    for (const j of ['nonexistentjobid0123456789', 'a-b', 'abc%2Fdef', 'x%00y']) {
      const r = await f.app.inject({
        method: 'GET',
        url: f.url(j, 'out.txt'),
        headers: { ...A, accept: 'application/json' },
      });
      assert.equal(r.statusCode, 404, j);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_JOB_NOT_FOUND');
    }
  });

  it('a job whose session directory is gone (wiped) is 404', async () => {
    const gone = await f.newJob(A['x-test-dn']);
    await (await import('node:fs/promises')).rm(f.sessionDir(gone), { recursive: true });
    const r = await f.app.inject({ method: 'GET', url: f.url(gone), headers: A });
    assert.equal(r.statusCode, 404);
  });

  it(
    'a file the service may not read (permissions set by the job) is 403',
    { skip: process.getuid?.() === 0 ? 'root reads everything' : false },
    async () => {
      await writeFile(join(f.sessionDir(id), 'locked'), 'x', { mode: 0 });
      const r = await f.app.inject({
        method: 'GET',
        url: f.url(id, 'locked'),
        headers: { ...A, accept: 'application/json' },
      });
      assert.equal(r.statusCode, 403);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_PERMISSION_DENIED');
    },
  );

  it('no identity is 401', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'out.txt') });
    assert.equal(r.statusCode, 401);
  });

  it('POST and other methods are 405 with Allow (PATCH is a Ceres extension: session-patch.test.ts)', async () => {
    for (const method of ['POST', 'MKCOL', 'COPY', 'MOVE'] as const) {
      const r = await f.app.inject({ method, url: f.url(id, 'out.txt'), headers: A, payload: 'x' });
      assert.equal(r.statusCode, 405, method);
      assert.equal(r.headers.allow, 'GET, PUT, PATCH, DELETE, PROPFIND, HEAD');
    }
  });
});
