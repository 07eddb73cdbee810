import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ensureDevPki } from '../../src/pki/dev-pki.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STREAM_BUFFER_BYTES, useLargeStreamBuffers } from '../../src/http/stream-buffers.js';

test('after useLargeStreamBuffers, TLS sockets and answers take a 1 MiB answer without backpressure', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-hwm-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pki = await ensureDevPki(join(dir, 'pki'));
  useLargeStreamBuffers();
  useLargeStreamBuffers(); // idempotent
  const seen: { socket: number; res: number; wrote: boolean }[] = [];
  const server = createServer(
    { key: readFileSync(pki.files.hostKey), cert: readFileSync(pki.files.hostCert) },
    (req, res) => {
      res.writeHead(200, { 'content-length': String(1024 * 1024) });
      // false here is what makes Node's HTTP server pause the parser for the next request.
      const wrote = res.write(Buffer.alloc(1024 * 1024, 1));
      seen.push({ socket: req.socket.writableHighWaterMark, res: res.writableHighWaterMark, wrote });
      res.end();
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const size = await new Promise<number>((resolve, reject) => {
    request({ port, host: '127.0.0.1', ca: readFileSync(pki.files.caCert), servername: 'localhost' }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
    })
      .on('error', reject)
      .end();
  });
  assert.equal(size, 1024 * 1024);
  assert.equal(seen.length, 1);
  assert.ok((seen[0]?.socket ?? 0) >= STREAM_BUFFER_BYTES, `socket high-water mark ${seen[0]?.socket}`);
  assert.ok((seen[0]?.res ?? 0) >= STREAM_BUFFER_BYTES);
  assert.equal(seen[0]?.wrote, true);
});
