/** The multipart reader and the job-history parsers without a service. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { boundaryOf, MultipartReader } from '../../src/api/web/multipart.js';
import { duration, parseDiag, parseErrorsFile } from '../../src/api/web/job-history.js';
import { historySection } from '../../src/api/web/pages.js';
import type { JobRecord } from '../../src/store/job-record.js';

const B = 'XyZ-boundary';
const LIMITS = { maxParts: 8, maxHeaderBytes: 1024, maxFieldBytes: 256, maxBodyBytes: 1 << 20 };

/** A request whose body arrives in the given pieces. */
function requestOf(pieces: readonly Buffer[]): IncomingMessage {
  const p = new PassThrough() as PassThrough & { complete: boolean };
  p.complete = false;
  p.on('end', () => (p.complete = true));
  (async () => {
    for (const c of pieces) {
      if (!p.write(c)) await new Promise((r) => p.once('drain', r));
    }
    p.end();
  })().catch(() => undefined);
  return p as unknown as IncomingMessage;
}

function body(parts: { name: string; filename?: string; content: Buffer }[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const fn = p.filename === undefined ? '' : `; filename="${p.filename}"`;
    out.push(
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="${p.name}"${fn}\r\n\r\n`),
      p.content,
      Buffer.from('\r\n'),
    );
  }
  out.push(Buffer.from(`--${B}--\r\n`));
  return Buffer.concat(out);
}

function split(b: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (b.length + 1)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of at) {
    out.push(b.subarray(prev, c));
    prev = c;
  }
  out.push(b.subarray(prev));
  return out.filter((x) => x.length > 0);
}

async function readAll(req: IncomingMessage): Promise<{ name: string; filename?: string; content: string }[]> {
  const mp = new MultipartReader(req, B, LIMITS);
  const got: { name: string; filename?: string; content: string }[] = [];
  for (let p = await mp.next(); p !== undefined; p = await mp.next()) {
    if (p.filename === undefined) got.push({ name: p.name, content: await mp.text() });
    else {
      const chunks: Buffer[] = [];
      for await (const c of mp.stream()) chunks.push(c as Buffer);
      got.push({ name: p.name, filename: p.filename, content: Buffer.concat(chunks).toString('latin1') });
    }
  }
  return got;
}

describe('multipart reader', () => {
  it('reads the same parts however the body is cut into chunks (delimiters split anywhere)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (field, file, cuts) => {
          const content = Buffer.from(file);
          const b = body([
            { name: 'csrf', content: Buffer.from(field) },
            { name: 'file', filename: 'f.bin', content },
          ]);
          // The sender picks a boundary absent from the content (RFC 2046).
          if (Buffer.concat([Buffer.from('\r\n'), content]).includes(`\r\n--${B}`)) return;
          const got = await readAll(requestOf(split(b, cuts)));
          assert.deepEqual(got, [
            { name: 'csrf', content: Buffer.from(field).toString('utf8') },
            { name: 'file', filename: 'f.bin', content: content.toString('latin1') },
          ]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a body sent one byte at a time', async () => {
    const b = body([
      { name: 'a', content: Buffer.from('1') },
      { name: 'file', filename: 'x', content: Buffer.from('\r\n--X\r\n') },
    ]);
    const got = await readAll(requestOf([...b].map((x) => Buffer.from([x]))));
    assert.deepEqual(got, [
      { name: 'a', content: '1' },
      { name: 'file', filename: 'x', content: '\r\n--X\r\n' },
    ]);
  });

  it('refuses too many parts, a huge header, a long field, an unterminated body, a too large body', async () => {
    const many = body(Array.from({ length: 9 }, (_, i) => ({ name: `f${i}`, content: Buffer.from('v') })));
    await assert.rejects(readAll(requestOf([many])), { code: 'CE_ERR_WEB_FORM_TOO_LARGE' });
    const head = Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="a"\r\nX: ${'x'.repeat(2000)}\r\n\r\nv\r\n--${B}--`,
    );
    await assert.rejects(readAll(requestOf([head])), { code: 'CE_ERR_WEB_FORM_TOO_LARGE' });
    const long = body([{ name: 'a', content: Buffer.alloc(257, 0x61) }]);
    await assert.rejects(readAll(requestOf([long])), { code: 'CE_ERR_WEB_FORM_TOO_LARGE' });
    const cut = body([{ name: 'a', content: Buffer.from('v') }]).subarray(0, -8);
    await assert.rejects(readAll(requestOf([cut])), { code: 'CE_ERR_WEB_FORM_INVALID' });
    const preamble = Buffer.alloc(5000, 0x61);
    await assert.rejects(readAll(requestOf([preamble])), { code: 'CE_ERR_WEB_FORM_INVALID' });
    const big = body([{ name: 'f', filename: 'x', content: Buffer.alloc(5000) }]);
    const mp = new MultipartReader(requestOf(split(big, [500, 1000, 1500, 2000])), B, {
      ...LIMITS,
      maxBodyBytes: 1000,
    });
    await assert.rejects(
      (async () => {
        await mp.next();
        for await (const c of mp.stream()) void c;
      })(),
      { code: 'CE_ERR_WEB_UPLOAD_TOO_LARGE' },
    );
  });

  it('ends a part still being read once the request is dropped (a refused upload leaves no waiting read)', async () => {
    const p = new PassThrough() as PassThrough & { complete: boolean };
    p.complete = false;
    p.write(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nsome bytes`));
    const mp = new MultipartReader(p as unknown as IncomingMessage, B, LIMITS);
    await mp.next();
    const s = mp.stream();
    const ended = new Promise<string>((resolve) => {
      s.on('error', () => resolve('error'));
      s.on('end', () => resolve('end'));
      s.resume();
    });
    await new Promise((r) => setTimeout(r, 20));
    mp.drop(); // the body never ends; without the drop's wake-up the read would wait for it forever
    assert.equal(await ended, 'error');
    p.destroy();
  });

  it('takes the boundary from the media type and refuses others', () => {
    assert.equal(boundaryOf(`multipart/form-data; boundary=${B}`), B);
    assert.equal(boundaryOf('Multipart/Form-Data; charset=utf-8; boundary="a b"'), 'a b');
    for (const ct of [
      undefined,
      'text/plain',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      `multipart/form-data; boundary=${'x'.repeat(71)}`,
      'multipart/mixed; boundary=a',
    ])
      assert.throws(() => boundaryOf(ct), { code: 'CE_ERR_WEB_FORM_INVALID' }, String(ct));
  });
});

describe('job history from the control files', () => {
  it('splits the errors file into state changes and messages', () => {
    const e = parseErrorsFile(
      [
        '2026-01-02T03:04:05Z Job state change ACCEPTED -> PREPARING   Reason: submitted',
        '2026-01-02T03:04:06Z stage-in of a.txt failed: <b>404</b>',
        '2026-01-02T03:04:07Z Job state change PREPARING -> PENDING:SUBMIT   Reason: limit',
        'untimed line',
        '',
      ].join('\n'),
    );
    assert.deepEqual(e.transitions, [
      { at: '2026-01-02 03:04:05 UTC', from: 'ACCEPTED', to: 'PREPARING', reason: 'submitted' },
      { at: '2026-01-02 03:04:07 UTC', from: 'PREPARING', to: 'PENDING:SUBMIT', reason: 'limit' },
    ]);
    assert.deepEqual(e.messages, [
      { at: '2026-01-02 03:04:06 UTC', text: 'stage-in of a.txt failed: <b>404</b>' },
      { at: '', text: 'untimed line' },
    ]);
    assert.deepEqual(parseErrorsFile(undefined), { transitions: [], messages: [] });
  });

  it('reads the usage of the diag file, leaving out what is missing or malformed', () => {
    assert.deepEqual(
      parseDiag(
        'nodename=n1\nWallTime=12.50s\nUserTime=3.00s\nKernelTime=0.25s\nMaxResidentMemory=2048kB\nexitcode=3\nLRMSMessage=out of time\n',
      ),
      {
        node: 'n1',
        wallSeconds: 12.5,
        userSeconds: 3,
        kernelSeconds: 0.25,
        maxRssKiB: 2048,
        exitCode: 3,
        message: 'out of time',
      },
    );
    assert.deepEqual(parseDiag('WallTime=abc\nexitcode=x\nMaxResidentMemory=12MB\n'), {});
    assert.equal(parseDiag(''), undefined);
    assert.equal(duration(4.2), '4.20 s');
    assert.equal(duration(3723), '1 h 02 min 03 s');
  });
});

describe('the state history section', () => {
  const job = (state: string, pending = false) =>
    ({
      state,
      pending,
      createdAt: Date.UTC(2026, 0, 2, 3, 4, 0),
      updatedAt: Date.UTC(2026, 0, 2, 3, 9, 0),
    }) as unknown as JobRecord;
  const log = [
    '2026-01-02T03:04:05Z Job state change ACCEPTED -> PREPARING   Reason: <script>x</script>',
    '2026-01-02T03:04:06Z Job state change PREPARING -> SUBMIT   Reason: ok',
  ].join('\n');

  it('lists submission and each logged change, escaped, and nothing more when the log is complete', () => {
    const h = historySection(job('SUBMIT'), parseErrorsFile(log)).text;
    assert.equal((h.match(/<li>/g) ?? []).length, 3);
    assert.match(h, /2026-01-02 03:04:00 UTC<\/time> <strong>ACCEPTED<\/strong> <span>submitted/);
    assert.match(h, /&lt;script&gt;x&lt;\/script&gt;/);
    assert.doesNotMatch(h, /not logged/);
  });

  it('ends with the current state, marked, when a change was lost to a crash before its line', () => {
    const h = historySection(job('SUBMIT', true), parseErrorsFile(log)).text;
    assert.equal((h.match(/<li>/g) ?? []).length, 4);
    assert.match(
      h,
      /2026-01-02 03:09:00 UTC<\/time> <strong>PENDING:SUBMIT<\/strong> <span>\(the change was not logged\)/,
    );
    const none = historySection(job('INLRMS'), parseErrorsFile(undefined)).text;
    assert.match(none, /<strong>ACCEPTED<\/strong> <span>submitted/);
    assert.match(none, /<strong>INLRMS<\/strong> <span>\(the change was not logged\)/);
    assert.doesNotMatch(historySection(job('ACCEPTED'), parseErrorsFile(undefined)).text, /not logged/);
  });
});
