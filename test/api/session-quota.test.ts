// Limits on what clients write into a session: the largest file (default far below
// the old 1 TiB), the per-job upload quota (a sparse ranged write counts its full
// extent), and a full file system (507).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { Agent, request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';
import { DEFAULT_MAX_FILE_BYTES } from '../../src/sessions/session-files.js';
import { buildConfig } from '../../src/config/load.js';
import { UPLOAD_TEMP_PREFIX } from '../../src/sessions/session-path.js';
import { until } from '../helpers/poll.js';

const J = { ...A, accept: 'application/json' };
const KiB = 1024;
const MiB = 1024 * KiB;
const TiB = 1024 ** 4;

const codeOf = (body: string): string => JSON.parse(body).code as string;
const temps = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith(UPLOAD_TEMP_PREFIX));

describe('largest file by default', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture();
  });
  after(() => f.close());

  it('a ranged PUT ending at 1 TiB is refused with 413 and creates no sparse file', async () => {
    const id = await f.newJob(A['x-test-dn']);
    const r = await f.app.inject({
      method: 'PUT',
      url: f.url(id, 'sparse'),
      headers: { ...J, 'content-range': `bytes ${TiB - 10}-${TiB - 1}/${TiB}` },
      payload: '0123456789',
    });
    assert.equal(r.statusCode, 413);
    assert.equal(codeOf(r.body), 'CE_ERR_SESSION_FILE_TOO_LARGE');
    assert.deepEqual(await readdir(f.sessionDir(id)), []);
  });

  it('the default and the configured limit are far below 1 TiB, and the config carries them', () => {
    assert.ok(DEFAULT_MAX_FILE_BYTES <= 64 * 1024 ** 3);
    const c = buildConfig({});
    assert.equal(c.sessions.maxFileBytes, DEFAULT_MAX_FILE_BYTES);
    assert.ok(c.sessions.maxUploadBytesPerJob >= c.sessions.maxFileBytes);
  });
});

describe('per-job upload quota', () => {
  let f: Fixture;
  let port: number;
  const QUOTA = MiB;
  before(async () => {
    f = await makeFixture({ maxUploadBytesPerJob: QUOTA, maxFileBytes: 64 * MiB });
    port = await f.listen();
  });
  after(() => f.close());

  const put = (id: string, path: string, payload: Buffer | string, headers: Record<string, string> = {}) =>
    f.app.inject({ method: 'PUT', url: f.url(id, path), headers: { ...J, ...headers }, payload });

  it('a sparse ranged write counts its full extent: 413 before the body is read, no file', async () => {
    const id = await f.newJob(A['x-test-dn']);
    const at = 2 * MiB;
    const r = await put(id, 'sparse', 'x', { 'content-range': `bytes ${at}-${at}/${at + 1}` });
    assert.equal(r.statusCode, 413);
    assert.equal(codeOf(r.body), 'CE_ERR_SESSION_JOB_QUOTA');
    assert.match(JSON.parse(r.body).reason, /quota of 1048576 bytes/);
    assert.deepEqual(await readdir(f.sessionDir(id)), []);
    // Below the quota the same kind of write is fine and then counts its extent.
    assert.equal(
      (await put(id, 'sparse', 'x', { 'content-range': `bytes ${900 * KiB}-${900 * KiB}/${900 * KiB + 1}` }))
        .statusCode,
      200,
    );
    assert.equal(f.files.quota.usage(id), 900 * KiB + 1);
    const over = await put(id, 'other', Buffer.alloc(200 * KiB));
    assert.equal(over.statusCode, 413);
    assert.equal(codeOf(over.body), 'CE_ERR_SESSION_JOB_QUOTA');
  });

  it('files add up; a replacement counts its new size only; a deletion frees its share', async () => {
    const id = await f.newJob(A['x-test-dn']);
    const a = Buffer.alloc(600 * KiB, 1);
    assert.equal((await put(id, 'a', a)).statusCode, 200);
    const b = await put(id, 'b', Buffer.alloc(600 * KiB, 2));
    assert.equal(b.statusCode, 413);
    assert.equal(codeOf(b.body), 'CE_ERR_SESSION_JOB_QUOTA');
    assert.deepEqual((await readdir(f.sessionDir(id))).sort(), ['a']);
    assert.ok((await readFile(join(f.sessionDir(id), 'a'))).equals(a), 'the refused upload left the other file alone');
    assert.equal(
      (await put(id, 'a', Buffer.alloc(1000 * KiB, 3))).statusCode,
      200,
      'replacing a file counts its new size only',
    );
    assert.equal((await put(id, 'a', Buffer.alloc(600 * KiB, 4))).statusCode, 200);
    assert.equal((await f.app.inject({ method: 'DELETE', url: f.url(id, 'a'), headers: J })).statusCode, 204);
    assert.equal(f.files.quota.usage(id), 0);
    assert.equal((await put(id, 'b', Buffer.alloc(600 * KiB, 2))).statusCode, 200);
    // Deleting a directory frees everything below it.
    assert.equal((await put(id, 'd/e/f', Buffer.alloc(300 * KiB))).statusCode, 200);
    assert.equal((await f.app.inject({ method: 'DELETE', url: f.url(id, 'd/'), headers: J })).statusCode, 204);
    assert.equal(f.files.quota.usage(id), 600 * KiB);
  });

  it('the quota is per job: another job of the same user has its own', async () => {
    const one = await f.newJob(A['x-test-dn']);
    const two = await f.newJob(A['x-test-dn']);
    assert.equal((await put(one, 'x', Buffer.alloc(QUOTA))).statusCode, 200);
    assert.equal((await put(two, 'x', Buffer.alloc(QUOTA))).statusCode, 200);
    assert.equal((await put(one, 'y', 'z')).statusCode, 413);
  });

  it(
    'a chunked upload (no length) is cut off with 413 when it passes the quota, leaves no temporary, and the connection goes on',
    { timeout: 30_000 },
    async () => {
      const id = await f.newJob(A['x-test-dn']);
      assert.equal((await put(id, 'first', Buffer.alloc(512 * KiB))).statusCode, 200);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const call = (path: string, body: (req: ClientRequest) => void) =>
        new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
          const req = request(
            { port, host: '127.0.0.1', method: 'PUT', path: f.url(id, path), headers: J, agent },
            (res) => {
              let b = '';
              res.on('data', (c: Buffer) => (b += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b, reused: req.reusedSocket }));
            },
          );
          req.on('error', reject);
          body(req);
        });
      try {
        const refused = await call('chunked', (req) => {
          let sent = 0;
          const pump = (): void => {
            while (sent < 4 * MiB) {
              sent += 64 * KiB;
              if (!req.write(Buffer.alloc(64 * KiB, 9))) return void req.once('drain', pump);
            }
            req.end();
          };
          pump();
        });
        assert.equal(refused.status, 413);
        assert.equal(codeOf(refused.body), 'CE_ERR_SESSION_JOB_QUOTA');
        assert.deepEqual(await temps(f.sessionDir(id)), []);
        assert.deepEqual(await readdir(f.sessionDir(id)), ['first']);
        assert.equal(f.files.quota.usage(id), 512 * KiB, 'the refused upload holds no reservation');
        // The rest of the refused body was read and dropped: the same connection serves the next request.
        const next = await call('small', (req) => req.end('fits'));
        assert.equal(next.status, 200);
        assert.equal(next.reused, true);
      } finally {
        agent.destroy();
      }
    },
  );

  it('an aborted plain upload counts nothing, an aborted ranged write what it extended the file to', async () => {
    const id = await f.newJob(A['x-test-dn']);
    const dir = f.sessionDir(id);
    const size = async () => (await stat(join(dir, 'r')).catch(() => undefined))?.size ?? 0;
    const startPut = async (headers: string) => {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      await new Promise((r) => s.once('connect', r));
      s.write(`PUT ${f.url(id, 'r')} HTTP/1.1\r\nHost: x\r\nx-test-dn: ${A['x-test-dn']}\r\n${headers}\r\n`);
      s.write(Buffer.alloc(100 * KiB, 1));
      return s;
    };
    let s = await startPut(`Content-Length: ${800 * KiB}\r\n`);
    await until(async () => (await temps(dir)).length > 0, 'the upload to start');
    s.destroy();
    await until(async () => (await temps(dir)).length === 0, 'the temporary to go');
    assert.equal(f.files.quota.usage(id), 0);

    s = await startPut(`Content-Range: bytes 0-${800 * KiB - 1}/${800 * KiB}\r\nContent-Length: ${800 * KiB}\r\n`);
    await until(async () => (await size()) > 0, 'the range to be written');
    s.destroy();
    // Counted at once is the whole range (in flight); once the write is over, what it wrote.
    await until(async () => f.files.quota.usage(id) === (await size()), 'the aborted range to be settled');
    const got = await size();
    assert.ok(got > 0 && got < 800 * KiB, `file size ${got}`);
    assert.equal(f.files.quota.usage(id), got);
  });
});

describe('a full file system', () => {
  let f: Fixture;
  let id: string;
  let mounted = '';
  let why = '';
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(A['x-test-dn']);
    // A 1 MiB tmpfs over a directory inside the job's session (needs root; skipped
    // otherwise). Not over the session directory itself: that would be another directory
    // than the one recorded at submission, which the service refuses to touch (409).
    const disk = join(f.sessionDir(id), 'disk');
    mkdirSync(disk, { mode: 0o700 });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', disk], { stdio: 'pipe' });
      mounted = disk;
    } catch (e) {
      why = `cannot mount a tmpfs here (${String((e as Error).message).split('\n')[0]})`;
    }
  });
  after(async () => {
    if (mounted) execFileSync('umount', [mounted]);
    await f.close();
  });

  it('an upload that fills the disk is 507 Insufficient Storage and leaves no temporary', async (t) => {
    if (!mounted) return t.skip(why);
    const r = await f.app.inject({
      method: 'PUT',
      url: f.url(id, 'disk/big'),
      headers: J,
      payload: Buffer.alloc(2 * MiB, 1),
    });
    assert.equal(r.statusCode, 507);
    assert.equal(codeOf(r.body), 'CE_ERR_SESSION_NO_SPACE');
    assert.deepEqual(await readdir(mounted), []);
    assert.equal(f.files.quota.usage(id), 0);
  });

  it('a ranged write that fills the disk is 507 too, and the service still answers', async (t) => {
    if (!mounted) return t.skip(why);
    const r = await f.app.inject({
      method: 'PUT',
      url: f.url(id, 'disk/r'),
      headers: { ...J, 'content-range': `bytes 0-${2 * MiB - 1}/${2 * MiB}` },
      payload: Buffer.alloc(2 * MiB, 1),
    });
    assert.equal(r.statusCode, 507);
    assert.equal(codeOf(r.body), 'CE_ERR_SESSION_NO_SPACE');
    assert.equal((await f.app.inject({ method: 'DELETE', url: f.url(id, 'disk/r'), headers: J })).statusCode, 204);
    assert.equal(
      (await f.app.inject({ method: 'PUT', url: f.url(id, 'disk/small'), headers: J, payload: 'fits' })).statusCode,
      200,
    );
  });
});

describe('per-job upload quota with several writes in flight', () => {
  let f: Fixture;
  let port: number;
  const QUOTA = 6 * MiB;
  before(async () => {
    f = await makeFixture({ maxUploadBytesPerJob: QUOTA, maxFileBytes: 64 * MiB });
    port = await f.listen();
  });
  after(() => f.close());

  const upload = (id: string, path: string, data: Buffer, chunked: boolean) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const headers = chunked ? J : { ...J, 'content-length': String(data.length) };
      const req = request({ port, host: '127.0.0.1', method: 'PUT', path: f.url(id, path), headers }, (res) => {
        let b = '';
        res.on('data', (c: Buffer) => (b += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
      });
      req.on('error', reject);
      let at = 0;
      const pump = (): void => {
        while (at < data.length) {
          const piece = data.subarray(at, at + 1 + Math.floor(Math.random() * 300 * KiB));
          at += piece.length;
          if (!req.write(piece)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });

  it('a body passing the quota several MiB in is refused; it leaves no temporary and no reservation', async () => {
    const id = await f.newJob(A['x-test-dn']);
    const first = Buffer.alloc(MiB, 1);
    assert.equal((await upload(id, 'first', first, false)).status, 200);
    const refused = await upload(id, 'big', Buffer.alloc(20 * MiB, 2), true);
    assert.equal(refused.status, 413);
    assert.equal(codeOf(refused.body), 'CE_ERR_SESSION_JOB_QUOTA');
    assert.deepEqual(await readdir(f.sessionDir(id)), ['first']);
    assert.equal(f.files.quota.usage(id), MiB, 'the refused upload holds no reservation');
    // What still fits is stored whole, byte for byte.
    const fits = Buffer.alloc(5 * MiB);
    for (let i = 0; i < fits.length; i += 4) fits.writeUInt32LE(i, i);
    assert.equal((await upload(id, 'fits', fits, true)).status, 200);
    assert.ok((await readFile(join(f.sessionDir(id), 'fits'))).equals(fits));
    assert.equal(f.files.quota.usage(id), 6 * MiB);
    assert.deepEqual(await temps(f.sessionDir(id)), []);
  });
});
