/**
 * Session transfers over real HTTP/1.1 sockets: Expect: 100-continue as the ARC client
 * uses it, large files streamed in both directions with bounded memory, aborted
 * uploads, and connection reuse after a refused upload.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, stat, truncate } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { A, ALICE, makeFixture, parseRaw, type Fixture } from '../sessions/fixture.js';
import { until } from '../helpers/poll.js';

const MiB = 1024 * 1024;

/** Resolves with everything received until `done(received)` says so (or rejects on close). */
function readUntil(sock: Socket, done: (b: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (done(got)) {
        sock.off('data', onData);
        sock.off('close', onClose);
        resolve(got);
      }
    };
    const onClose = () => reject(new Error(`socket closed after: ${got.toString('latin1').slice(0, 300)}`));
    sock.on('data', onData);
    sock.once('close', onClose);
  });
}

describe('session transfers over real sockets', () => {
  let f: Fixture;
  let port: number;
  let id: string;
  let dir: string;
  before(async () => {
    f = await makeFixture();
    port = await f.listen();
    id = await f.newJob(ALICE);
    dir = f.sessionDir(id);
  });
  after(() => f.close());

  const target = (p: string) => `/arex/rest/1.0/jobs/${id}/session/${p}`;

  it('Expect: 100-continue: the client gets 100 Continue before it sends the body, then 200', async () => {
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const body = Buffer.from('uploaded by the ARC client\n');
    sock.write(
      `PUT https://127.0.0.1:${port}${target('in.txt')} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nuser-agent: ARC\r\n` +
        `x-test-dn: ${ALICE}\r\nExpect: 100-continue\r\nIf-None-Match: *\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const interim = await readUntil(sock, (b) => b.includes('\r\n\r\n'));
    assert.match(interim.toString('latin1'), /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    const finalP = readUntil(sock, (b) => b.includes('\r\n\r\n'));
    sock.write(body);
    const res = parseRaw(await finalP);
    sock.destroy();
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-length'], '0');
    assert.equal(
      await f.files.open(dir, { segments: ['in.txt'], trailingSlash: false, rel: 'in.txt' }).then(async (o) => {
        const b = await o.handle.readFile();
        await o.handle.close();
        return b.toString();
      }),
      body.toString(),
    );
    assert.equal((await f.control.read(id, 'input_status'))?.toString(), '/in.txt\n');
  });

  it('a 400 MB (sparse) file is streamed out with bounded memory', async () => {
    const size = 400 * MiB;
    await (await open(join(dir, 'big.bin'), 'w')).close();
    await truncate(join(dir, 'big.bin'), size);
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    let received = 0;
    let firstStatus = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request({ port, host: '127.0.0.1', method: 'GET', path: target('big.bin'), headers: A }, (res) => {
          firstStatus = res.statusCode ?? 0;
          assert.equal(res.headers['content-length'], String(size));
          res.on('data', (c: Buffer) => (received += c.length));
          res.on('end', resolve);
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    } finally {
      clearInterval(timer);
    }
    assert.equal(firstStatus, 200);
    assert.equal(received, size);
    // Buffering the file would need 400 MB at once; streaming holds a few 1 MiB chunks
    // (plus garbage the collector has not reclaimed yet: ~50 MB measured).
    assert.ok(peak - before < 200 * MiB, `RSS grew by ${Math.round((peak - before) / MiB)} MiB`);
  });

  it("a download carries exactly the file's bytes, chunk boundaries included, also for a range", async () => {
    // Distinct bytes everywhere (not a sparse file) so that a recycled buffer sending
    // stale data would show: 3 MiB + 7 bytes spans several 1 MiB chunks and a short tail.
    const data = Buffer.alloc(3 * MiB + 7);
    for (let i = 0; i + 4 <= data.length; i += 4) data.writeUInt32LE(i >>> 0, i);
    const fh = await open(join(dir, 'pattern.bin'), 'w');
    await fh.write(data);
    await fh.close();
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
        const req = request(
          { port, host: '127.0.0.1', method: 'GET', path: target('pattern.bin'), headers: { ...A, ...headers } },
          (res) => {
            const parts: Buffer[] = [];
            res.on('data', (c: Buffer) => parts.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
    const [whole, again] = await Promise.all([get({}), get({})]);
    assert.equal(whole.status, 200);
    assert.ok(whole.body.equals(data));
    assert.ok(again.body.equals(data));
    const part = await get({ range: `bytes=${MiB - 3}-${2 * MiB + 5}` });
    assert.equal(part.status, 206);
    assert.ok(part.body.equals(data.subarray(MiB - 3, 2 * MiB + 6)));
  });

  it('a file truncated while it is sent cuts the connection instead of hanging', async () => {
    const size = 64 * MiB;
    await (await open(join(dir, 'shrinks.bin'), 'w')).close();
    await truncate(join(dir, 'shrinks.bin'), size);
    let received = 0;
    const outcome = await new Promise<string>((resolve) => {
      const req = request(
        { port, host: '127.0.0.1', method: 'GET', path: target('shrinks.bin'), headers: A },
        (res) => {
          assert.equal(res.headers['content-length'], String(size));
          res.once('data', (c: Buffer) => {
            received += c.length;
            // Read slowly until the file is cut to 1 MiB, then take the rest.
            res.pause();
            void truncate(join(dir, 'shrinks.bin'), MiB).then(() => res.resume());
          });
          res.on('data', (c: Buffer) => (received += c.length));
          res.on('end', () => resolve('end'));
          res.on('aborted', () => resolve('aborted'));
          res.on('error', () => resolve('error'));
          res.on('close', () => resolve(res.complete ? 'end' : 'aborted'));
        },
      );
      req.on('error', () => resolve('error'));
      req.end();
    });
    assert.notEqual(outcome, 'end');
    assert.ok(received < size, `received ${received} of ${size}`);
  });

  it('a 128 MB upload is streamed to disk with bounded memory and completes', async () => {
    const size = 128 * MiB;
    const chunk = Buffer.alloc(MiB, 0x5a);
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    let status = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          {
            port,
            host: '127.0.0.1',
            method: 'PUT',
            path: target('up.bin'),
            headers: { ...A, 'content-length': String(size) },
          },
          (res) => {
            status = res.statusCode ?? 0;
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        let sent = 0;
        const pump = () => {
          while (sent < size) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
    } finally {
      clearInterval(timer);
    }
    assert.equal(status, 200);
    assert.equal((await stat(join(dir, 'up.bin'))).size, size);
    assert.ok(peak - before < 100 * MiB, `RSS grew by ${Math.round((peak - before) / MiB)} MiB`);
    assert.match((await f.control.read(id, 'input_status'))?.toString() ?? '', /^\/up\.bin$/m);
  });

  it('an upload aborted mid-body leaves no file, no temporary and no completion mark', async () => {
    const job = await f.newJob(ALICE);
    f.pokes.length = 0;
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(
      `PUT /arex/rest/1.1/jobs/${job}/session/half.bin HTTP/1.1\r\nHost: x\r\nx-test-dn: ${ALICE}\r\nContent-Length: ${4 * MiB}\r\n\r\n`,
    );
    sock.write(Buffer.alloc(MiB, 1));
    // Wait until the server has created its temporary file, then vanish.
    await until(async () => (await readdir(f.sessionDir(job))).length > 0, 'the upload to start');
    sock.destroy();
    await until(async () => (await readdir(f.sessionDir(job))).length === 0, 'the temporary file to be removed');
    assert.equal(await f.control.read(job, 'input_status'), undefined);
    assert.deepEqual(f.pokes, []);
  });

  it('an upload cut off with several writes in flight leaves no temporary; the next one is intact', async () => {
    const job = await f.newJob(ALICE);
    const sdir = f.sessionDir(job);
    const sizeOnDisk = async () => {
      let n = 0;
      for (const e of await readdir(sdir)) n += (await stat(join(sdir, e))).size;
      return n;
    };
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(
      `PUT /arex/rest/1.1/jobs/${job}/session/cut.bin HTTP/1.1\r\nHost: x\r\nx-test-dn: ${ALICE}\r\nContent-Length: ${64 * MiB}\r\n\r\n`,
    );
    for (let i = 0; i < 24; i++) sock.write(Buffer.alloc(MiB, i));
    // Vanish while the server is writing: more than the bytes of one batch are on disk.
    await until(async () => (await sizeOnDisk()) > 6 * MiB, 'the upload to be written');
    sock.destroy();
    await until(async () => (await readdir(sdir)).length === 0, 'the temporary file to be removed');
    assert.equal(await f.control.read(job, 'input_status'), undefined);

    // Random content in pieces of random size: every byte lands where it belongs.
    const data = randomBytes(9 * MiB + 12345);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { port, host: '127.0.0.1', method: 'PUT', path: `/arex/rest/1.1/jobs/${job}/session/whole.bin`, headers: A },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      let at = 0;
      const pump = () => {
        while (at < data.length) {
          const n = 1 + Math.floor(Math.random() * 200_000);
          const piece = data.subarray(at, at + n);
          at += piece.length;
          if (!req.write(piece)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(status, 200);
    assert.ok((await readFile(join(sdir, 'whole.bin'))).equals(data), 'content differs');
    assert.deepEqual(await readdir(sdir), ['whole.bin']);
  });

  it('an aborted ranged chunk is not counted as received', async () => {
    const job = await f.newJob(ALICE);
    const put = (range: string, body: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            port,
            host: '127.0.0.1',
            method: 'PUT',
            path: `/arex/rest/1.1/jobs/${job}/session/r.bin`,
            headers: { ...A, 'content-range': range },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    assert.equal(await put('bytes 1000-1999/2000', Buffer.alloc(1000, 2)), 200);
    const connections = () =>
      new Promise<number>((res, rej) => f.app.server.getConnections((e, n) => (e ? rej(e) : res(n))));
    const idle = await connections();
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write(
      `PUT /arex/rest/1.1/jobs/${job}/session/r.bin HTTP/1.1\r\nHost: x\r\nx-test-dn: ${ALICE}\r\nContent-Range: bytes 0-999/2000\r\nContent-Length: 1000\r\n\r\n`,
    );
    sock.write(Buffer.alloc(400, 1));
    // Wait until the server is writing this chunk (its first bytes are on disk), then vanish.
    await until(async () => (await readFile(join(f.sessionDir(job), 'r.bin')))[0] === 1, 'the chunk to be written');
    sock.destroy();
    await until(async () => (await connections()) <= idle, 'the server to drop the connection');
    await sleep(300);
    assert.equal(
      await f.control.read(job, 'input_status'),
      undefined,
      'the aborted chunk would have completed the file',
    );
    assert.equal(f.files.tracker.size > 0, true, 'the first chunk is still tracked');
    // The first half sent properly now completes the file: nothing of the aborted try was counted.
    assert.equal(await put('bytes 0-999/2000', Buffer.alloc(1000, 1)), 200);
    assert.equal((await f.control.read(job, 'input_status'))?.toString(), '/r.bin\n');
  });

  it('the connection stays usable after a refused upload and after a 416', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; reused: boolean; body: string }>((resolve, reject) => {
        const req = request(
          { port, host: '127.0.0.1', method, path: target(path), headers: { ...A, ...headers }, agent },
          (res) => {
            let b = '';
            res.on('data', (c: Buffer) => (b += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, body: b }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      assert.equal((await call('PUT', 'k.txt', {}, 'keep')).status, 200);
      const refused = await call('PUT', 'k.txt', { 'if-none-match': '*' }, 'x'.repeat(10000));
      assert.equal(refused.status, 412);
      const bad = await call('PUT', 'k.txt', { 'content-range': 'bytes 9-1/20' }, 'x'.repeat(1000));
      assert.equal(bad.status, 400);
      assert.equal(bad.reused, true);
      const r416 = await call('GET', 'k.txt', { range: 'bytes=10-' });
      assert.equal(r416.status, 416);
      const ok = await call('GET', 'k.txt', {});
      assert.equal(ok.status, 200);
      assert.equal(ok.body, 'keep');
      assert.equal(ok.reused, true);
    } finally {
      agent.destroy();
    }
  });
});
