import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';

const J = { ...A, accept: 'application/json' };

describe('DELETE on session paths', () => {
  let f: Fixture;
  let id: string;
  let dir: string;
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(A['x-test-dn']);
    dir = f.sessionDir(id);
    await writeFile(join(dir, 'new.txt'), 'x');
    await writeFile(join(dir, 'keep.txt'), 'k');
    await mkdir(join(dir, 'sub', 'dir', 'deeper'), { recursive: true });
    await writeFile(join(dir, 'sub', 'a'), 'a');
    await writeFile(join(dir, 'sub', 'dir', 'deeper', 'b'), 'b');
  });
  after(() => f.close());

  const del = (path: string) => f.app.inject({ method: 'DELETE', url: f.url(id, path), headers: J });

  it('a file: 204 with no body, and it is gone', async () => {
    const r = await del('new.txt');
    assert.equal(r.statusCode, 204);
    assert.equal(r.body, '');
    await assert.rejects(stat(join(dir, 'new.txt')));
  });

  it('the same file again: 404 (A-REX answers 500)', async () => {
    const r = await del('new.txt');
    assert.equal(r.statusCode, 404);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_NOT_FOUND');
  });

  it('a directory: removed recursively', async () => {
    const r = await del('sub');
    assert.equal(r.statusCode, 204);
    assert.deepEqual(await readdir(dir), ['keep.txt']);
  });

  it('the session directory itself is refused with 403 and stays whole', async () => {
    for (const p of ['', '/']) {
      const r = await f.app.inject({ method: 'DELETE', url: f.url(id) + p, headers: J });
      assert.equal(r.statusCode, 403, p);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_ROOT_DELETE');
    }
    assert.deepEqual(await readdir(dir), ['keep.txt']);
  });

  it('a file named with a trailing slash is 404 and stays', async () => {
    const r = await del('keep.txt/');
    assert.equal(r.statusCode, 404);
    await stat(join(dir, 'keep.txt'));
  });

  it('a deletion forgets a partial upload: a later chunk starts a new upload', async () => {
    let r = await f.app.inject({
      method: 'PUT',
      url: f.url(id, 'part'),
      headers: { ...J, 'content-range': 'bytes 0-1/4' },
      payload: 'ab',
    });
    assert.equal(r.statusCode, 200);
    assert.equal((await del('part')).statusCode, 204);
    r = await f.app.inject({
      method: 'PUT',
      url: f.url(id, 'part'),
      headers: { ...J, 'content-range': 'bytes 2-3/4' },
      payload: 'cd',
    });
    assert.equal(r.statusCode, 200);
    assert.equal(await f.control.read(id, 'input_status'), undefined, 'bytes 0-1 were deleted: not complete');
  });
});
