/**
 * The script-free upload form (multipart/form-data POST) against the real service, as an
 * attacker would send it: without or with a foreign token, from another site, with path
 * tricks in the file or folder name, huge or endless bodies, too many or too large
 * parts, a malformed body, a disconnect mid-file. Every refusal is a clear 4xx, nothing
 * is written outside the session directory, no temporary file stays, no 5xx is logged.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { credential, head, send, tlsConnect, vanish } from '../helpers/raw-tls.js';
import { until } from '../helpers/poll.js';

const MAX = 4096;
const B = '----ceresFormBoundary7MA4YWxkTrZu0gW';

function part(name: string, value: string | Buffer, filename?: string): Buffer {
  const disp = `form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}`;
  return Buffer.concat([
    Buffer.from(
      `--${B}\r\nContent-Disposition: ${disp}\r\n${filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n'}\r\n`,
    ),
    Buffer.isBuffer(value) ? value : Buffer.from(value),
    Buffer.from('\r\n'),
  ]);
}
const closing = Buffer.from(`--${B}--\r\n`);
const form = (...parts: Buffer[]) => Buffer.concat([...parts, closing]);

/** Every file under `dir` (recursively), as paths relative to it. */
function walk(dir: string, rel = ''): string[] {
  let out: string[] = [];
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out = out.concat(walk(dir, r));
    else out.push(r);
  }
  return out;
}

describe('web upload form without script', () => {
  let ceres: RunningCeres;
  let client: Client;
  let origin: string;
  let id: string;
  let token: string;
  const long = '&(executable="/bin/sh")(arguments="-c" "sleep 600")';

  const post = (body: Buffer, headers: Record<string, string> = {}, jobId = id) =>
    client.req('POST', `/web/jobs/${jobId}/upload`, body, {
      accept: 'text/html',
      origin,
      'content-type': `multipart/form-data; boundary=${B}`,
      ...headers,
    });
  const sessionFiles = () =>
    walk(ceres.stateDir).filter((f) => f.includes(id.slice(-8)) || f.includes('.ceres-upload.'));
  const temps = () => walk(ceres.stateDir).filter((f) => f.split('/').pop()?.startsWith('.ceres-upload.'));
  const noServerErrors = () => assert.doesNotMatch(ceres.output(), /"level":50|Internal Server Error/);

  before(async () => {
    ceres = await startCeres({
      config: { sessions: { maxFileBytes: MAX }, http: { minBodyBytesPerSecond: 100, bodyRateWindowSeconds: 1 } },
    });
    client = Client.forUser(ceres);
    origin = new URL(ceres.url).origin;
    const [job] = await client.submit(long);
    id = job.id as string;
    const page = await client.req('GET', `/web/jobs/${id}`, undefined, { accept: 'text/html' });
    assert.equal(page.status, 200);
    token = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] as string;
    assert.ok(token);
  });

  after(async () => {
    if (id) await client.action('kill', [id]).catch(() => undefined);
    await client?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it('stores a file sent as a browser sends it, in the named folder, and answers 303 to the page', async () => {
    const r = await post(form(part('csrf', token), part('dir', ''), part('file', 'hello\n', 'hello.txt')));
    assert.equal(r.status, 303, r.text.slice(0, 3000));
    assert.match(String(r.headers.location), new RegExp(`/web/jobs/${id}\\?dir=&done=uploaded$`));
    const got = await client.req('GET', `/rest/1.1/jobs/${id}/session/hello.txt`, undefined, { accept: '*/*' });
    assert.equal(got.text, 'hello\n');
    const sub = await post(form(part('csrf', token), part('dir', 'sub/deeper'), part('file', 'x', 'in-sub.txt')));
    assert.equal(sub.status, 303, sub.text.slice(0, 2000));
    const got2 = await client.req('GET', `/rest/1.1/jobs/${id}/session/sub/deeper/in-sub.txt`, undefined, {
      accept: '*/*',
    });
    assert.equal(got2.text, 'x');
    // Boundary-like bytes inside the content are content (a delimiter is CRLF--boundary).
    const tricky = Buffer.from(`a--${B}\r\n\r\n--${B.slice(0, 30)}\r\n-${B}b\r`);
    const t = await post(form(part('csrf', token), part('file', tricky, 'tricky.bin')));
    assert.equal(t.status, 303, t.text);
    const got3 = await client.req('GET', `/rest/1.1/jobs/${id}/session/tricky.bin`, undefined, { accept: '*/*' });
    assert.equal(got3.text, tricky.toString());
  });

  it('refuses a form without a token, with a foreign or forged token, or with the file before the token', async () => {
    const none = await post(form(part('file', 'x', 'a.txt')));
    assert.equal(none.status, 403);
    assert.match(none.text, /reload the page/);
    const forged = await post(
      form(part('csrf', `${Math.floor(Date.now() / 1000)}.${'A'.repeat(43)}`), part('file', 'x', 'a.txt')),
    );
    assert.equal(forged.status, 403);
    const late = await post(form(part('file', 'x', 'a.txt'), part('csrf', token)));
    assert.equal(late.status, 403);
    assert.equal(sessionFiles().filter((f) => f.endsWith('/a.txt')).length, 0);
  });

  it('refuses the form from another site (Origin, Sec-Fetch-Site) before reading it', async () => {
    const body = form(part('csrf', token), part('file', 'x', 'b.txt'));
    assert.equal((await post(body, { origin: 'https://evil.example' })).status, 403);
    assert.equal((await post(body, { origin: 'null' })).status, 403);
    assert.equal((await post(body, { 'sec-fetch-site': 'cross-site' })).status, 403);
    assert.equal(sessionFiles().filter((f) => f.endsWith('/b.txt')).length, 0);
  });

  it('refuses path tricks in the file or folder name (nothing written outside the session)', async () => {
    for (const name of [
      '../../escape.txt',
      '..',
      '.',
      'a/b.txt',
      'C:\\Users\\x\\evil.txt',
      'nul\u0001.txt',
      '.ceres-upload.x',
    ]) {
      const r = await post(form(part('csrf', token), part('file', 'x', name)));
      assert.equal(r.status, 400, `${name}: ${r.status} ${r.text}`);
    }
    for (const dir of ['..', '../..', 'a/../..', '/..//x']) {
      const r = await post(form(part('csrf', token), part('dir', dir), part('file', 'x', 'd.txt')));
      assert.equal(r.status, 400, `${dir}: ${r.status}`);
    }
    assert.deepEqual(
      walk(ceres.stateDir).filter((f) => /escape\.txt|evil\.txt|\/d\.txt$/.test(f)),
      [],
    );
  });

  it('follows no link the job made: neither a linked folder nor a linked file is written through', async () => {
    const outside = tempDir('outside');
    const [j] = await client.submit(
      `&(executable="/bin/sh")(arguments="-c" "ln -s ${outside} linkdir; ln -s ${outside}/target.txt linkfile; echo ok > ready; sleep 600")`,
    );
    const jid = j.id as string;
    try {
      await until(
        async () =>
          (await client.req('GET', `/rest/1.1/jobs/${jid}/session/ready`, undefined, { accept: '*/*' })).status === 200,
        'the job to make its links',
      );
      const page = await client.req('GET', `/web/jobs/${jid}`, undefined, { accept: 'text/html' });
      const t = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] as string;
      const intoDir = await post(
        form(part('csrf', t), part('dir', 'linkdir'), part('file', 'x', 'planted.txt')),
        {},
        jid,
      );
      assert.equal(intoDir.status, 403, intoDir.text.slice(0, 500));
      const overFile = await post(form(part('csrf', t), part('file', 'x', 'linkfile')), {}, jid);
      assert.equal(overFile.status, 403);
      assert.deepEqual(readdirSync(outside), []);
    } finally {
      await client.action('kill', [jid]);
      removeDir(outside);
    }
  });

  it('refuses a missing file, a missing boundary, a malformed or unterminated body with a 400 and leaves no temp file', async () => {
    const empty = await post(form(part('csrf', token), part('file', '', '')));
    assert.equal(empty.status, 400);
    assert.match(empty.text, /Choose a file/);
    assert.equal((await post(form(part('csrf', token)))).status, 400);
    assert.equal((await post(form(part('csrf', token)), { 'content-type': 'multipart/form-data' })).status, 400);
    assert.equal((await post(form(part('csrf', token)), { 'content-type': 'text/plain' })).status, 400);
    const cut = Buffer.concat([part('csrf', token), part('file', 'partial content', 'cut.txt')]);
    const r = await post(cut);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /malformed/);
    const noDisposition = Buffer.from(`--${B}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${B}--\r\n`);
    assert.equal((await post(noDisposition)).status, 400);
    assert.deepEqual(temps(), []);
    assert.equal(sessionFiles().filter((f) => f.endsWith('/cut.txt')).length, 0);
  });

  it('refuses a file over the limit (declared length: before reading; chunked: when it passes it)', async () => {
    const big = form(part('csrf', token), part('file', Buffer.alloc(MAX * 40), 'big.bin'));
    const declared = await post(big);
    assert.equal(declared.status, 413);
    assert.match(declared.text, /upload limit/);
    // Within the form's overhead allowance, the file itself is over the file limit.
    const over = await post(form(part('csrf', token), part('file', Buffer.alloc(MAX + 1), 'over.bin')));
    assert.equal(over.status, 413, over.text);
    // Chunked, no length: cut as it passes the limit.
    async function* chunks() {
      yield form(part('csrf', token)).subarray(0, -closing.length);
      yield Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="endless.bin"\r\n\r\n`);
      for (let i = 0; i < 200; i++) yield Buffer.alloc(1024, 0x61);
    }
    const r = await request(`${ceres.url}/web/jobs/${id}/upload`, {
      method: 'POST',
      dispatcher: client.agent,
      headers: { origin, 'content-type': `multipart/form-data; boundary=${B}` },
      body: Readable.from(chunks()),
    }).catch((e: unknown) => e);
    if (!(r instanceof Error)) {
      assert.equal((r as { statusCode: number }).statusCode, 413);
      await (r as { body: { text: () => Promise<string> } }).body.text();
    }
    await until(() => temps().length === 0, 'no temporary upload file left');
    assert.equal(sessionFiles().filter((f) => /big\.bin|over\.bin|endless\.bin/.test(f)).length, 0);
  });

  it('refuses a form of many parts or a part with a huge header', async () => {
    const many = form(part('csrf', token), ...Array.from({ length: 100 }, (_, i) => part(`f${i}`, 'v')));
    const r = await post(many);
    assert.equal(r.status, 413);
    assert.match(r.text, /more than 8 parts/);
    const hugeHead = Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="csrf"\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\nv\r\n--${B}--\r\n`,
    );
    assert.equal((await post(hugeHead)).status, 413);
    const hugeField = form(part('csrf', 'x'.repeat(10_000)), part('file', 'x', 'f.txt'));
    assert.equal((await post(hugeField)).status, 413);
  });

  it('cuts a form whose file trickles below the body-rate floor with a 408, leaving no temp file', async () => {
    const s = await tlsConnect(ceres.port, credential(ceres.pkiDir));
    let answer = '';
    s.on('data', (d: Buffer) => (answer += d.toString()));
    const start = Buffer.concat([
      part('csrf', token),
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\n\r\n`),
    ]);
    await send(
      s,
      head('POST', `${new URL(ceres.url).pathname}/web/jobs/${id}/upload`, {
        origin,
        'content-type': `multipart/form-data; boundary=${B}`,
        'content-length': start.length + 3000,
      }),
    );
    await send(s, start);
    await until(() => temps().length > 0, 'the upload to begin');
    // Then nothing: the floor (100 bytes/s over 1 s) cuts it within a second or two.
    await until(() => answer.includes('\r\n\r\n'), 'an answer', 20_000);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    await until(() => temps().length === 0, 'the temporary file to go');
    s.destroy();
  });

  it('survives a client that vanishes mid-file: no temp file left, no 5xx, the service keeps answering', async () => {
    for (const reset of [false, true]) {
      const s = await tlsConnect(ceres.port, credential(ceres.pkiDir));
      const start = Buffer.concat([
        part('csrf', token),
        Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="gone.bin"\r\n\r\n`),
        Buffer.alloc(1500, 0x62),
      ]);
      await send(
        s,
        head('POST', `${new URL(ceres.url).pathname}/web/jobs/${id}/upload`, {
          origin,
          'content-type': `multipart/form-data; boundary=${B}`,
          'content-length': start.length + 2000,
        }),
      );
      await send(s, start);
      // Wait until the service has started writing the file (a temp file exists), then vanish.
      await until(() => temps().length > 0, 'the upload to begin');
      vanish(s, reset);
      await until(() => temps().length === 0, 'the temporary file to go');
    }
    assert.equal(sessionFiles().filter((f) => f.endsWith('/gone.bin')).length, 0);
    assert.equal((await client.req('GET', '/rest/1.1/info')).status, 200);
    noServerErrors();
  });
});
