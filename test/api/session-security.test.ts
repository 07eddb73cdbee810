/**
 * No request path leaves the session directory, and no user reaches another user's
 * job. Requests go over a real socket so the request target arrives byte for byte
 * (inject would normalise `..` and `%2e%2e` away before the service sees them).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { A, ALICE, B, BOB, makeFixture, rawRequest, type Fixture } from '../sessions/fixture.js';

describe('session path safety over the wire', () => {
  let f: Fixture;
  let port: number;
  let id: string;
  let dir: string;
  let outside: string;

  before(async () => {
    f = await makeFixture();
    port = await f.listen();
    id = await f.newJob(ALICE);
    dir = f.sessionDir(id);
    outside = join(f.root, 'outside');
    await mkdir(join(outside, 'sub'), { recursive: true });
    await writeFile(join(outside, 'secret.txt'), 'SECRET');
    await writeFile(join(outside, 'sub', 'more.txt'), 'MORE');
    await writeFile(join(dir, 'ok.txt'), 'fine');
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'd', 'in.txt'), 'inside');
    await symlink(join(outside, 'secret.txt'), join(dir, 'esc-file'));
    await symlink(outside, join(dir, 'esc-dir'));
    await symlink('../..', join(dir, 'd', 'up'));
    await symlink('ok.txt', join(dir, 'same-dir-link'));
  });
  after(() => f.close());

  const req = (method: string, path: string, extra = '', body?: string) =>
    rawRequest(
      port,
      `${method} /arex/rest/1.1/jobs/${id}/session/${path} HTTP/1.1\r\nx-test-dn: ${ALICE}\r\naccept: application/json${extra}`,
      body,
    );

  const codeOf = (body: Buffer): string | undefined => {
    try {
      return JSON.parse(body.toString()).code;
    } catch {
      return undefined;
    }
  };

  it('the harness really sends raw targets: a plain file comes back', async () => {
    const r = await req('GET', 'ok.txt');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'fine');
  });

  const traversals = [
    '../../../../etc/passwd',
    '..',
    'd/../../x',
    'd/../ok.txt',
    './ok.txt',
    'd/./in.txt',
    '%2e%2e/%2e%2e/etc/passwd',
    '%2E%2E/%2E%2E/etc/passwd',
    '%2e%2E/x',
    '.%2e/x',
    '%2e/ok.txt',
    '..%2f..%2fetc%2fpasswd',
    '..%2F..%2Fetc%2Fpasswd',
    'd%2f..%2f..%2fx',
    '..%5c..%5cetc%5cpasswd',
    'd%5Cin.txt',
    '..\\..\\etc\\passwd',
    'd\\in.txt',
    'ok.txt%00.png',
    '%00',
    'a%0Ab',
    'd//in.txt',
    '/etc/passwd',
    'x/%zz',
    '%c0%ae%c0%ae/etc/passwd',
  ];

  for (const p of traversals) {
    it(`GET ${p} is a 400 (malformed path), never a file`, async () => {
      const r = await req('GET', p);
      assert.equal(r.status, 400, `${p}: ${r.status} ${r.body.toString()}`);
      assert.ok(!r.body.toString().includes('SECRET') && !r.body.toString().includes('root:'));
    });
  }

  it('the same traversals are refused for PUT, DELETE and PROPFIND, and nothing outside changes', async () => {
    for (const p of traversals) {
      for (const m of ['PUT', 'DELETE', 'PROPFIND']) {
        const r = await req(m, p, m === 'PUT' ? '\r\ncontent-length: 5' : '', m === 'PUT' ? 'EVIL!' : undefined);
        assert.equal(r.status, 400, `${m} ${p}: ${r.status}`);
        // Malformed %-escapes and invalid UTF-8 are already refused by the HTTP router (a 400 too).
        if (!/%zz|%c0/.test(p)) assert.equal(codeOf(r.body), 'CE_ERR_SESSION_BAD_PATH', `${m} ${p}`);
      }
    }
    assert.deepEqual((await readdir(outside)).sort(), ['secret.txt', 'sub']);
    assert.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'SECRET');
    assert.equal(await readFile(join(dir, 'ok.txt'), 'utf8'), 'fine');
  });

  it('a symlink to a file outside is never read (403), also via PROPFIND', async () => {
    for (const m of ['GET', 'HEAD', 'PROPFIND']) {
      const r = await req(m, 'esc-file');
      assert.equal(r.status, 403, m);
      assert.ok(!r.body.toString().includes('SECRET'));
    }
  });

  it('a symlink to a directory outside is never listed or traversed (403)', async () => {
    for (const p of [
      'esc-dir',
      'esc-dir/',
      'esc-dir/secret.txt',
      'esc-dir/sub/more.txt',
      'd/up/',
      'd/up/outside/secret.txt',
    ]) {
      for (const m of ['GET', 'PROPFIND']) {
        const r = await req(m, p);
        assert.equal(r.status, 403, `${m} ${p}`);
        assert.equal(codeOf(r.body), 'CE_ERR_SESSION_SYMLINK');
        assert.ok(!/SECRET|MORE|secret\.txt|more\.txt/.test(r.body.toString()), `${m} ${p}`);
      }
    }
  });

  it('even a symlink staying inside the session is not followed', async () => {
    const r = await req('GET', 'same-dir-link');
    assert.equal(r.status, 403);
  });

  it('nothing is written through a symlinked file or directory', async () => {
    for (const p of [
      'esc-file',
      'esc-dir/secret.txt',
      'esc-dir/new.txt',
      'esc-dir/sub/new/x.txt',
      'd/up/outside/secret.txt',
    ]) {
      const r = await req('PUT', p, '\r\ncontent-length: 5', 'EVIL!');
      assert.equal(r.status, 403, p);
    }
    assert.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'SECRET');
    assert.deepEqual((await readdir(outside)).sort(), ['secret.txt', 'sub']);
    assert.deepEqual(await readdir(join(outside, 'sub')), ['more.txt']);
  });

  it('DELETE below a symlinked directory is 403 and removes nothing outside', async () => {
    for (const p of ['esc-dir/secret.txt', 'esc-dir/sub', 'd/up/outside']) {
      const r = await req('DELETE', p);
      assert.equal(r.status, 403, p);
    }
    await stat(join(outside, 'secret.txt'));
    await stat(join(outside, 'sub', 'more.txt'));
  });

  it('listings and PROPFIND never show symlinks', async () => {
    const g = await req('GET', '');
    assert.deepEqual(JSON.parse(g.body.toString()).file, ['ok.txt']);
    assert.deepEqual(JSON.parse(g.body.toString()).dir, ['d']);
    const p = await req('PROPFIND', '', '\r\nDepth: 1');
    assert.equal(p.status, 207);
    assert.ok(!/esc-|same-dir-link/.test(p.body.toString()));
  });

  it('deleting a symlink removes the link only; its target survives', async () => {
    const r = await req('DELETE', 'esc-dir');
    assert.equal(r.status, 204);
    await stat(join(outside, 'sub', 'more.txt'));
    await assert.rejects(stat(join(dir, 'esc-dir')));
  });
});

describe('session and diagnose files are per user', () => {
  let f: Fixture;
  let id: string;
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(ALICE);
    await writeFile(join(f.sessionDir(id), 'mine.txt'), 'alice data');
    await f.control.write(id, 'errors', 'alice log\n');
  });
  after(() => f.close());

  const J = { accept: 'application/json' };

  it('the owner sees her files', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.url(id, 'mine.txt'), headers: A });
    assert.equal(r.statusCode, 200);
  });

  it('another user gets 404 Job not found for every method, exactly as for a missing job', async () => {
    const missing = await f.app.inject({
      method: 'GET',
      url: f.url('a'.repeat(26), 'mine.txt'),
      headers: { ...B, ...J },
    });
    for (const [method, path] of [
      ['GET', 'mine.txt'],
      ['HEAD', 'mine.txt'],
      ['GET', ''],
      ['PUT', 'mine.txt'],
      ['PUT', 'new.txt'],
      ['DELETE', 'mine.txt'],
      ['DELETE', ''],
      ['PROPFIND', ''],
      ['PROPFIND', 'mine.txt'],
    ] as const) {
      const r = await f.app.inject({
        method,
        url: f.url(id, path),
        headers: { ...B, ...J },
        ...(method === 'PUT' ? { payload: 'bob was here' } : {}),
      });
      assert.equal(r.statusCode, 404, `${method} ${path}`);
      if (method !== 'HEAD') assert.deepEqual(JSON.parse(r.body), JSON.parse(missing.body), `${method} ${path}`);
    }
    for (const name of ['errors', 'description', 'nosuchname']) {
      const r = await f.app.inject({ method: 'GET', url: f.diag(id, name), headers: { ...B, ...J } });
      assert.equal(r.statusCode, 404, name);
    }
    const e = await f.app.inject({ method: 'GET', url: f.diag(id, 'errors'), headers: { ...B, ...J } });
    assert.equal(JSON.parse(e.body).code, 'CE_ERR_JOB_NOT_FOUND');
    assert.equal(await readFile(join(f.sessionDir(id), 'mine.txt'), 'utf8'), 'alice data');
    assert.deepEqual(await readdir(f.sessionDir(id)), ['mine.txt']);
    assert.equal(await f.control.read(id, 'input_status'), undefined);
  });

  it('Bob’s own job does not open Alice’s files either', async () => {
    const bobs = await f.newJob(BOB);
    const r = await f.app.inject({ method: 'GET', url: f.url(bobs, 'mine.txt'), headers: B });
    assert.equal(r.statusCode, 404);
  });
});
