/**
 * A graceful close of the service waits for requests in progress, never for the rest of
 * a body that was already answered (src/http/graceful-close.ts).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { UPLOAD_TEMP_PREFIX } from '../../src/sessions/session-path.js';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';

const MiB = 1024 * 1024;

/** Resolves with what `p` gave, or rejects naming `what` after `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A raw connection: what arrived so far, and whether the service closed it. */
function open(port: number): { sock: Socket; got: () => string; closed: Promise<void> } {
  const sock = connect(port, '127.0.0.1');
  let text = '';
  sock.on('data', (c: Buffer) => (text += c.toString('latin1')));
  sock.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()));
  return { sock, got: () => text, closed };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends a chunked PUT of `bytes` in 256 KiB chunks, stopping early once an answer arrived. */
async function putChunked(c: ReturnType<typeof open>, path: string, bytes: number, end: boolean): Promise<void> {
  c.sock.write(
    `PUT ${path} HTTP/1.1\r\nHost: localhost\r\nx-test-dn: ${A['x-test-dn']}\r\naccept: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
  );
  const chunk = Buffer.alloc(256 * 1024, 7);
  for (let sent = 0; sent < bytes && !c.got().startsWith('HTTP/1.1'); sent += chunk.length) {
    c.sock.write(`${chunk.length.toString(16)}\r\n`);
    c.sock.write(chunk);
    if (!c.sock.write('\r\n')) await new Promise((r) => c.sock.once('drain', r));
  }
  if (end) c.sock.write('0\r\n\r\n');
}

describe('graceful close and answered bodies', () => {
  let f: Fixture | undefined;
  afterEach(async () => {
    await f?.close().catch(() => undefined);
    f = undefined;
  });

  /** A service with a quota of 1 MiB per job, and a chunked upload of `bytes` answered 413. */
  async function refusedUpload(bytes: number, end: boolean) {
    f = await makeFixture({ maxUploadBytesPerJob: MiB, maxFileBytes: 64 * MiB });
    const id = await f.newJob(A['x-test-dn']);
    const c = open(await f.listen());
    await putChunked(c, f.url(id, 'big'), bytes, end);
    await until(() => /\r\n\r\n/.test(c.got()), 'the answer');
    assert.match(c.got(), /^HTTP\/1\.1 413 /);
    return { fx: f, id, c };
  }

  it('a client that stops sending after its 413 does not hold the close; its connection is cut', async () => {
    const { fx, c } = await refusedUpload(64 * MiB, false);
    // The client neither sends the rest nor closes: Node's own HTTP client behaves so
    // when the answer comes first.
    f = undefined;
    await within(fx.close(), 10_000, 'the close of the service');
    await within(c.closed, 10_000, 'the cut of the answered connection');
  });

  it('a client that sends the rest after its 413 keeps its connection; the close then ends it as idle', async () => {
    const { fx, id, c } = await refusedUpload(4 * MiB, true);
    const before = c.got().length;
    c.sock.write(
      `GET ${fx.url(id)} HTTP/1.1\r\nHost: localhost\r\nx-test-dn: ${A['x-test-dn']}\r\naccept: application/json\r\n\r\n`,
    );
    await until(() => c.got().slice(before).includes('HTTP/1.1 200'), 'the second answer on the same connection');
    f = undefined;
    await within(fx.close(), 10_000, 'the close of the service');
    await within(c.closed, 10_000, 'the close of the idle connection');
  });

  it('a request still being read when the close begins is answered, not cut', async () => {
    f = await makeFixture({ maxUploadBytesPerJob: 64 * MiB, maxFileBytes: 64 * MiB });
    const port = await f.listen();
    const id = await f.newJob(A['x-test-dn']);
    const c = open(port);
    await putChunked(c, f.url(id, 'slow'), MiB, false);
    const dir = f.sessionDir(id);
    await until(() => readdirSync(dir).some((n) => n.startsWith(UPLOAD_TEMP_PREFIX)), 'the upload to begin');
    const fx = f;
    f = undefined;
    const closing = fx.close();
    // The upload in progress is waited for: its end arrives after the close began.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(c.got(), '', 'no answer before the body is complete');
    c.sock.write('0\r\n\r\n');
    await until(() => /\r\n\r\n/.test(c.got()), 'the answer');
    assert.match(c.got(), /^HTTP\/1\.1 20[01] /);
    await within(closing, 10_000, 'the close of the service');
  });
});
