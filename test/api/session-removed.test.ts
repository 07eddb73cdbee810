// Every session operation meeting a session directory removed while it works (a clean or a
// wipe of the job racing a client's request): the answer is the catalog's 404
// CE_ERR_SESSION_NOT_FOUND, never a raw ENOENT/ENOTDIR (a 500), and never a listing that
// passes off the removed directory as empty. The removal runs deterministically inside the
// lease, after the directory was opened and verified and before the operation: the
// window a real removal can hit.
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';
import { UPLOAD_TEMP_PREFIX } from '../../src/sessions/session-path.js';
import { until } from '../helpers/poll.js';

const J = { ...A, accept: 'application/json' };

describe('session operations on a session directory removed while they work', () => {
  let f: Fixture;
  let id: string;
  let dir: string;
  /** The next lease removes the job's session (through SessionDirs.remove) before it is used. */
  let removeInLease = false;

  before(async () => {
    f = await makeFixture({
      lease: (real) => ({
        withRoot: (jobId, ident, fn) =>
          real.withRoot(jobId, ident, async (root) => {
            if (removeInLease) assert.equal((await real.remove(jobId, ident)).found, 'own');
            return fn(root);
          }),
      }),
    });
  });
  beforeEach(async () => {
    removeInLease = false;
    f.pokes.length = 0;
    id = await f.newJob(A['x-test-dn']);
    dir = f.sessionDir(id);
    await writeFile(join(dir, 'a.txt'), 'a');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'b.txt'), 'b');
    removeInLease = true;
  });
  after(() => f.close());

  const notFound = (r: { statusCode: number; body: string }, what: string) => {
    assert.equal(r.statusCode, 404, `${what}: ${r.body}`);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_NOT_FOUND', what);
    assert.ok(!existsSync(dir), `${what}: the session stays removed`);
  };
  const req = (method: string, path: string, headers: Record<string, string> = {}, payload?: string) =>
    f.app.inject({ method: method as 'GET', url: f.url(id, path), headers: { ...J, ...headers }, payload });

  it('GET listing of the session: 404, not an empty listing', async () => {
    notFound(await req('GET', ''), 'listing');
  });

  it('GET listing of a folder in it: 404', async () => {
    notFound(await req('GET', 'sub/'), 'folder listing');
  });

  it('GET of a file: 404', async () => {
    notFound(await req('GET', 'a.txt'), 'download');
  });

  it('PROPFIND Depth 1 and Depth 0 of the session: 404, not a 207 of an empty folder', async () => {
    notFound(await req('PROPFIND', '', { depth: '1' }), 'PROPFIND 1');
    id = await f.newJob(A['x-test-dn']);
    dir = f.sessionDir(id);
    notFound(await req('PROPFIND', '', { depth: '0' }), 'PROPFIND 0');
  });

  it('PUT of a whole file, of a range, and into a new folder: 404, nothing recorded as uploaded', async () => {
    notFound(await req('PUT', 'new.txt', {}, 'x'), 'whole');
    for (const [path, headers] of [
      ['r.bin', { 'content-range': 'bytes 0-0/2' }],
      ['deep/er/c.txt', {}],
    ] as const) {
      id = await f.newJob(A['x-test-dn']);
      dir = f.sessionDir(id);
      notFound(await req('PUT', path, headers, 'y'), path);
      assert.equal(await f.control.read(id, 'input_status'), undefined);
    }
  });

  it('DELETE of a file and of a folder: 404', async () => {
    notFound(await req('DELETE', 'a.txt'), 'file');
    id = await f.newJob(A['x-test-dn']);
    dir = f.sessionDir(id);
    notFound(await req('DELETE', 'sub'), 'folder');
  });

  it('a ranged upload whose session is removed while its body arrives: 404, not reported complete', async () => {
    removeInLease = false;
    const body = new PassThrough();
    const answer = f.app.inject({
      method: 'PUT',
      url: f.url(id, 'r.bin'),
      headers: { ...J, 'content-range': 'bytes 0-9/10' },
      payload: body,
    });
    body.write('01234');
    await until(() => existsSync(join(dir, 'r.bin')), 'the ranged file');
    assert.equal((await f.sessions.remove(id, f.store.sessionIdentOf(id) ?? null)).found, 'own');
    body.end('56789');
    notFound(await answer, 'ranged upload');
    assert.equal(await f.control.read(id, 'input_status'), undefined);
    assert.deepEqual(f.pokes, []);
  });

  it("an upload's temporary file swapped for a folder before it is placed: 404, not a raw ENOTDIR", async () => {
    removeInLease = false;
    const body = new PassThrough();
    const answer = f.app.inject({ method: 'PUT', url: f.url(id, 'a.txt'), headers: J, payload: body });
    body.write('first half ');
    let tmp: string | undefined;
    await until(async () => {
      tmp = (await readdir(dir)).find((n) => n.startsWith(UPLOAD_TEMP_PREFIX));
      return tmp !== undefined;
    }, 'the upload temporary');
    // What a job running in the directory can do while the upload is under way.
    await rm(join(dir, tmp as string));
    await mkdir(join(dir, tmp as string));
    body.end('second half');
    const r = await answer;
    assert.equal(r.statusCode, 404, r.body);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_NOT_FOUND');
  });
});
