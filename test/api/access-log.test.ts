// The access line (one per request, app.ts) is written through a child logger without the
// service's redaction. It must be byte for byte the line the request's own logger (the
// redacting one, with the request id bound) writes for the same fields, and no line that
// the service logs otherwise may lose its redaction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { REDACT } from '../../src/process/logger.js';
import { headerAuthenticator, testRoutes } from '../helpers/app.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l !== '') lines.push(l);
      done();
    },
  });
  return { lines, stream };
}

test('access line: the same bytes as through the request logger, request id and all', async () => {
  const { lines, stream } = capture();
  const logger = pino(
    { level: 'info', redact: { paths: REDACT, censor: '[redacted]' }, base: { svc: 'ceres' } },
    stream,
  );
  const app = buildApp({
    mountPoint: '/arex',
    routes: testRoutes(),
    authenticate: headerAuthenticator,
    logger,
    origin: () => 'https://localhost:8443',
  });
  // The reference: the same fields through request.log, logged after the access line.
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ method: request.method, token: 'secret', privateKey: 'k' }, 'redacted');
    void reply;
  });
  try {
    for (const [url, dn] of [
      ['/arex/rest', 'CN=a'],
      ['/arex/rest/1.1/nosuch?access_token=abc', 'CN=b'],
      ['/arex/rest/1.1/jobs', undefined],
    ] as const) {
      lines.length = 0;
      const res = await app.inject({ method: 'GET', url, headers: dn === undefined ? {} : { 'x-test-dn': dn } });
      const access = lines.find((l) => l.includes('"msg":"request"'));
      const other = lines.find((l) => l.includes('"msg":"redacted"'));
      assert.ok(access !== undefined && other !== undefined, lines.join('\n'));
      const reqId = String(res.headers['x-request-id']);
      const a = JSON.parse(access) as Record<string, unknown>;
      assert.deepEqual(Object.keys(a), [
        'level',
        'time',
        'svc',
        'reqId',
        'method',
        'url',
        'status',
        'ms',
        ...(dn === undefined ? [] : ['dn']),
        'remote',
        'msg',
      ]);
      assert.equal(a.reqId, reqId);
      assert.equal(a.url, url.replace('access_token=abc', 'access_token=[redacted]'));
      assert.equal(access, reference(reqId, a), 'as the redacting request logger writes it');
      // Other lines of the request keep the redaction.
      assert.match(other, /"token":"\[redacted\]","privateKey":"\[redacted\]"/);
      assert.match(other, new RegExp(`"reqId":"${reqId}"`));
    }
  } finally {
    await app.close();
  }
});

/** The access line's fields written through a redacting child with the request id bound, as Fastify makes one. */
function reference(reqId: string, a: Record<string, unknown>): string {
  const { lines, stream } = capture();
  const ref = pino({ level: 'info', redact: { paths: REDACT, censor: '[redacted]' }, base: { svc: 'ceres' } }, stream);
  const fields: Record<string, unknown> = {};
  for (const k of ['method', 'url', 'status', 'ms', 'dn', 'remote']) if (k in a) fields[k] = a[k];
  ref.child({ reqId }).info(fields, 'request');
  const line = lines[0] ?? '';
  // Same time as the line compared (the clock moved on).
  return line.replace(/"time":\d+/, `"time":${String(a.time)}`);
}

test('access line: a request refused before its handler (cross-site) names its peer too', async () => {
  const { lines, stream } = capture();
  const app = buildApp({
    mountPoint: '/arex',
    routes: testRoutes(),
    authenticate: headerAuthenticator,
    logger: pino({ level: 'info', base: { svc: 'ceres' } }, stream),
    origin: () => 'https://localhost:8443',
  });
  try {
    const res = await app.inject({
      method: 'POST',
      url: '/arex/rest/1.1/jobs?action=new',
      headers: { 'x-test-dn': 'CN=c', origin: 'https://evil.example', 'content-type': 'text/plain' },
      payload: '&(executable=/bin/true)',
    });
    assert.equal(res.statusCode, 403);
    const access = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request');
    assert.ok(access !== undefined, lines.join('\n'));
    assert.equal(access.status, 403);
    assert.equal(access.dn, 'CN=c');
    assert.equal(access.remote, '127.0.0.1');
  } finally {
    await app.close();
  }
});
