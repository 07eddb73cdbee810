import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';

const J = { ...A, accept: 'application/json' };

async function inputStatus(f: Fixture, id: string): Promise<string> {
  return (await f.control.read(id, 'input_status'))?.toString() ?? '';
}

describe('PUT on session files', () => {
  let f: Fixture;
  let id: string;
  let dir: string;
  before(async () => {
    f = await makeFixture({ tracker: { maxRanges: 4 } });
  });
  beforeEach(async () => {
    id = await f.newJob(A['x-test-dn']);
    dir = f.sessionDir(id);
    f.pokes.length = 0;
  });
  after(() => f.close());

  const put = (path: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
    f.app.inject({ method: 'PUT', url: f.url(id, path), headers: { ...J, ...headers }, payload });

  it('stores a file: 200 with an empty body, mode 0600, marked complete once and the engine poked', async () => {
    const r = await put('new.txt', 'new file content\n');
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '');
    assert.equal(await readFile(join(dir, 'new.txt'), 'utf8'), 'new file content\n');
    assert.equal((await stat(join(dir, 'new.txt'))).mode & 0o777, 0o600);
    assert.equal(await inputStatus(f, id), '/new.txt\n');
    assert.deepEqual(f.pokes, [id]);
  });

  it('accepts bodies without Content-Type and with a wrong one (the ARC client, DIRAC)', async () => {
    let r = await f.app.inject({ method: 'PUT', url: f.url(id, 'a'), headers: A, payload: 'x' });
    assert.equal(r.statusCode, 200);
    r = await put('b', '{"not":"json-to-parse"', { 'content-type': 'application/json' });
    assert.equal(r.statusCode, 200);
    assert.equal(await readFile(join(dir, 'b'), 'utf8'), '{"not":"json-to-parse"');
  });

  it('creates missing parent directories (0700) and records the full path', async () => {
    const r = await put('sub/dir/deep.txt', 'deep');
    assert.equal(r.statusCode, 200);
    assert.equal(await readFile(join(dir, 'sub', 'dir', 'deep.txt'), 'utf8'), 'deep');
    assert.equal((await stat(join(dir, 'sub'))).mode & 0o777, 0o700);
    assert.equal((await stat(join(dir, 'sub', 'dir'))).mode & 0o777, 0o700);
    assert.equal(await inputStatus(f, id), '/sub/dir/deep.txt\n');
  });

  it('decodes the name: a%20b.txt is stored as "a b.txt"', async () => {
    assert.equal((await put('a%20b.txt', 'x')).statusCode, 200);
    assert.equal(await readFile(join(dir, 'a b.txt'), 'utf8'), 'x');
    assert.equal(await inputStatus(f, id), '/a b.txt\n');
  });

  it('a plain PUT replaces the whole content (no stale tail, unlike A-REX)', async () => {
    await put('f', 'a long original content');
    assert.equal((await put('f', 'short')).statusCode, 200);
    assert.equal(await readFile(join(dir, 'f'), 'utf8'), 'short');
  });

  it('a zero-length PUT creates an empty file and marks it complete', async () => {
    const r = await put('empty', '');
    assert.equal(r.statusCode, 200);
    assert.equal((await stat(join(dir, 'empty'))).size, 0);
    assert.equal(await inputStatus(f, id), '/empty\n');
  });

  it('Content-Range writes at the offset without truncating (A-REX transcript)', async () => {
    await put('new.txt', 'new file content\n');
    let r = await put('new.txt', 'XXXX', { 'content-range': 'bytes 4-7/20' });
    assert.equal(r.statusCode, 200);
    assert.equal(await readFile(join(dir, 'new.txt'), 'utf8'), 'new XXXX content\n');
    r = await put('new.txt', 'YYYY', { 'content-range': 'bytes 30-33/34' });
    assert.equal(r.statusCode, 200);
    const b = await readFile(join(dir, 'new.txt'));
    assert.equal(b.length, 34);
    assert.equal(
      b.subarray(17, 30).every((x) => x === 0),
      true,
      'the gap is zeros',
    );
    assert.equal(b.subarray(30).toString(), 'YYYY');
    assert.equal(await inputStatus(f, id), '/new.txt\n', 'only the plain PUT completed the file');
  });

  it('ranged chunks mark the file complete when all bytes arrived, in any order, exactly once', async () => {
    const data = Buffer.from('0123456789');
    let r = await put('in.dat', data.subarray(5), { 'content-range': 'bytes 5-9/10' });
    assert.equal(r.statusCode, 200);
    assert.equal(await inputStatus(f, id), '');
    assert.deepEqual(f.pokes, []);
    r = await put('in.dat', data.subarray(0, 5), { 'content-range': 'bytes 0-4/10' });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(await readFile(join(dir, 'in.dat')), data);
    assert.equal(await inputStatus(f, id), '/in.dat\n');
    assert.deepEqual(f.pokes, [id]);
  });

  it('completing a ranged upload cuts a stale longer file to the announced total', async () => {
    await writeFile(join(dir, 'old'), 'x'.repeat(50));
    const r = await put('old', 'abcde', { 'content-range': 'bytes 0-4/5' });
    assert.equal(r.statusCode, 200);
    assert.equal(await readFile(join(dir, 'old'), 'utf8'), 'abcde');
    assert.equal(await inputStatus(f, id), '/old\n');
  });

  it('If-None-Match: * on an existing file is 412 and leaves it unchanged; on a new file it stores', async () => {
    await put('exists', 'original');
    f.pokes.length = 0;
    let r = await put('exists', 'other', { 'if-none-match': '*' });
    assert.equal(r.statusCode, 412);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_FILE_EXISTS');
    assert.equal(await readFile(join(dir, 'exists'), 'utf8'), 'original');
    assert.deepEqual(f.pokes, []);
    r = await put('fresh', 'new', { 'if-none-match': '*' });
    assert.equal(r.statusCode, 200);
    assert.equal(await readFile(join(dir, 'fresh'), 'utf8'), 'new');
  });

  it('If-None-Match: * does not refuse the later chunks of a ranged upload', async () => {
    assert.equal((await put('chunks', 'ab', { 'content-range': 'bytes 0-1/4', 'if-none-match': '*' })).statusCode, 200);
    assert.equal((await put('chunks', 'cd', { 'content-range': 'bytes 2-3/4', 'if-none-match': '*' })).statusCode, 200);
    assert.equal(await readFile(join(dir, 'chunks'), 'utf8'), 'abcd');
  });

  it('PUT on the session directory, with a trailing slash, or onto a directory is 409', async () => {
    await mkdir(join(dir, 'adir'));
    for (const p of ['', 'x/', 'adir', 'adir/']) {
      const r = await f.app.inject({ method: 'PUT', url: f.url(id, p), headers: J, payload: 'x' });
      assert.equal(r.statusCode, 409, p);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_IS_DIRECTORY');
    }
    const r = await put('adir', 'x', { 'content-range': 'bytes 0-0/1' });
    assert.equal(r.statusCode, 409);
    assert.equal((await stat(join(dir, 'adir'))).isDirectory(), true);
    assert.equal(await inputStatus(f, id), '');
  });

  it('PUT below a file is 409 (a parent is not a directory)', async () => {
    await put('plain', 'x');
    const r = await put('plain/child', 'y');
    assert.equal(r.statusCode, 409);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_PARENT_NOT_DIRECTORY');
  });

  it('malformed Content-Range is 400 and writes nothing', async () => {
    for (const cr of ['bytes 7-4/20', 'bytes 0-20/20', 'bytes a-b/20', 'bytes 1-2', 'bytes */20', 'bytes 1-2/x']) {
      const r = await put('cr', 'abcd', { 'content-range': cr });
      assert.equal(r.statusCode, 400, cr);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_BAD_CONTENT_RANGE');
    }
    await assert.rejects(stat(join(dir, 'cr')));
  });

  it('a body whose length does not match the Content-Range is 400 and not recorded', async () => {
    let r = await put('len', 'abc', { 'content-range': 'bytes 0-4/5' });
    assert.equal(r.statusCode, 400);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_BODY_LENGTH');
    r = await put('len', 'abcdefgh', { 'content-range': 'bytes 0-4/5' });
    assert.equal(r.statusCode, 400);
    assert.equal(await inputStatus(f, id), '');
  });

  it('too fragmented a ranged upload is refused before writing (bounded tracking)', async () => {
    for (const s of [0, 10, 20, 30])
      assert.equal((await put('frag', 'x', { 'content-range': `bytes ${s}-${s}/100` })).statusCode, 200);
    const r = await put('frag', 'x', { 'content-range': 'bytes 40-40/100' });
    assert.equal(r.statusCode, 409);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_UPLOAD_FRAGMENTED');
    assert.equal(
      (await put('frag', 'x'.repeat(9), { 'content-range': 'bytes 1-9/100' })).statusCode,
      200,
      'a filling chunk is fine',
    );
  });

  it('never writes through a symlink: onto a link, or below a linked directory, is 403', async () => {
    const outside = join(f.root, 'outside');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'target'), 'keep');
    await symlink(join(outside, 'target'), join(dir, 'lnk'));
    await symlink(outside, join(dir, 'lnkdir'));
    for (const [p, h] of [
      ['lnk', {}],
      ['lnk', { 'content-range': 'bytes 0-1/2' }],
      ['lnkdir/target', {}],
      ['lnkdir/new', {}],
      ['lnkdir/sub/new', {}],
    ] as const) {
      const r = await put(p, 'XX', h);
      assert.equal(r.statusCode, 403, p);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_SYMLINK');
    }
    assert.equal(await readFile(join(outside, 'target'), 'utf8'), 'keep');
    assert.deepEqual(await readdir(outside), ['target']);
  });

  it('leaves no temporary files behind', async () => {
    await put('t1', 'abc');
    await put('t1', 'abc', { 'if-none-match': '*' });
    assert.deepEqual((await readdir(dir)).sort(), ['t1']);
  });
});

describe('PUT size limit', () => {
  let f: Fixture;
  let id: string;
  before(async () => {
    f = await makeFixture({ maxFileBytes: 100 });
    id = await f.newJob(A['x-test-dn']);
  });
  after(() => f.close());

  it('a body or a range beyond maxFileBytes is 413 and leaves nothing', async () => {
    let r = await f.app.inject({ method: 'PUT', url: f.url(id, 'big'), headers: J, payload: Buffer.alloc(101) });
    assert.equal(r.statusCode, 413);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_FILE_TOO_LARGE');
    r = await f.app.inject({
      method: 'PUT',
      url: f.url(id, 'big'),
      headers: { ...J, 'content-range': 'bytes 100-100/101' },
      payload: 'x',
    });
    assert.equal(r.statusCode, 413);
    r = await f.app.inject({ method: 'PUT', url: f.url(id, 'ok'), headers: J, payload: Buffer.alloc(100) });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(await readdir(f.sessionDir(id)), ['ok']);
  });
});
