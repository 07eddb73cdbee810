// Cross-site refusal (browsers' form posts and scripted requests from other sites):
// the decision table, and the answer through the app for every non-safe method.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { crossSiteRefusal } from '../../src/http/cross-site.js';
import { headerAuthenticator, testRoutes } from '../helpers/app.js';
import type { Resource } from '../../src/api/rest/resource.js';

const OWN = ['https://ce.example.org:8443'];
const refuse = (method: string, h: { site?: string | string[]; origin?: string | string[] }, own = OWN): boolean =>
  crossSiteRefusal({ method, secFetchSite: h.site, origin: h.origin, ownOrigins: own }) !== undefined;

describe('crossSiteRefusal', () => {
  it('refuses non-safe methods a browser marks as cross-site or same-site', () => {
    for (const m of [
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'MKCOL',
      'COPY',
      'MOVE',
      'PROPPATCH',
      'LOCK',
      'UNLOCK',
      'TRACE',
    ]) {
      assert.ok(refuse(m, { site: 'cross-site' }), m);
      assert.ok(refuse(m, { site: 'same-site' }), m);
      assert.ok(refuse(m, { site: ' Cross-Site ' }), m);
    }
  });

  it('refuses a foreign, null, malformed or other-scheme/port Origin', () => {
    for (const origin of [
      'https://evil.example',
      'null',
      'https://ce.example.org',
      'https://ce.example.org:8444',
      'http://ce.example.org:8443',
      'https://ce.example.org.evil.example:8443',
      'https://ce.example.org:8443/path',
      'garbage',
      '',
    ]) {
      assert.ok(refuse('POST', { origin }), origin);
    }
  });

  it('accepts the own origin in any case and with a default port spelled out', () => {
    assert.ok(!refuse('POST', { origin: 'https://CE.example.ORG:8443' }));
    assert.ok(!refuse('POST', { origin: 'https://ce.example.org:443' }, ['https://ce.example.org']));
    assert.ok(!refuse('POST', { origin: 'https://ce.example.org' }, ['https://ce.example.org:443']));
    assert.ok(!refuse('POST', { origin: 'https://ce.example.org:8443', site: 'same-origin' }));
  });

  it('accepts requests without browser headers, and Sec-Fetch-Site none/same-origin', () => {
    assert.ok(!refuse('POST', {}));
    assert.ok(!refuse('PUT', { site: 'none' }));
    assert.ok(!refuse('DELETE', { site: 'same-origin' }));
  });

  it('never refuses safe methods', () => {
    for (const m of ['GET', 'HEAD', 'OPTIONS', 'PROPFIND'])
      assert.ok(!refuse(m, { site: 'cross-site', origin: 'https://evil.example' }), m);
  });

  it('a repeated header is judged by its first value', () => {
    assert.ok(refuse('POST', { origin: ['https://evil.example', 'https://ce.example.org:8443'] }));
    assert.ok(refuse('POST', { site: ['cross-site', 'same-origin'] }));
  });
});

describe('cross-site refusal through the app', () => {
  let reached = 0;
  const sink: Resource = {
    methods: Object.fromEntries(
      ['GET', 'POST', 'PUT', 'DELETE', 'PROPFIND'].map((m) => [
        m,
        (req) => (reached++, req.reply.code(200).send('ok')),
      ]),
    ),
  };
  const app = buildApp({
    mountPoint: '/arex',
    routes: testRoutes({ jobs: sink, session: sink, delegations: sink, delegation: sink }),
    authenticate: headerAuthenticator,
    logger: pino({ level: 'silent' }),
    origin: () => 'https://127.0.0.1:8443',
    publicUrl: 'https://ce.example.org/arex',
  });
  after(() => app.close());
  const U = { 'x-test-dn': '/CN=user', accept: 'application/json' };

  it('a text/plain form post of a job description from another site: 403 CE_ERR_HTTP_CROSS_SITE, handler not reached', async () => {
    reached = 0;
    const r = await app.inject({
      method: 'POST',
      url: '/arex/rest/1.1/jobs?action=new',
      headers: {
        ...U,
        host: '127.0.0.1:8443',
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        'content-type': 'text/plain',
      },
      payload: '&(executable="/bin/true")',
    });
    assert.equal(r.statusCode, 403);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_HTTP_CROSS_SITE');
    assert.equal(r.statusMessage, 'Cross-site request refused: a browser sent this request from another web site');
    assert.equal(r.headers.connection, 'close');
    assert.equal(reached, 0);
  });

  it('the origin addressed (Host), the listener origin and the public URL origin count as own', async () => {
    for (const [host, origin] of [
      ['127.0.0.1:8443', 'https://127.0.0.1:8443'],
      ['localhost:8443', 'https://localhost:8443'],
      ['whatever:1', 'https://127.0.0.1:8443'],
      ['127.0.0.1:8443', 'https://ce.example.org'],
    ]) {
      const r = await app.inject({
        method: 'PUT',
        url: '/arex/rest/1.1/jobs/ID/session/f',
        headers: { ...U, host: host as string, origin: origin as string },
        payload: 'x',
      });
      assert.equal(r.statusCode, 200, `${host} ${origin}: ${r.body}`);
    }
  });

  it('an Origin naming the host another Host header claims is still refused when it is not ours', async () => {
    const r = await app.inject({
      method: 'DELETE',
      url: '/arex/rest/1.1/jobs/ID/session/f',
      headers: { ...U, host: '127.0.0.1:8443', origin: 'https://127.0.0.2:8443' },
    });
    assert.equal(r.statusCode, 403);
  });

  it('refused before authentication and routing: no identity, an unknown path', async () => {
    assert.equal(
      (await app.inject({ method: 'POST', url: '/arex/rest/1.1/jobs?action=new', headers: { origin: 'null' } }))
        .statusCode,
      403,
    );
    assert.equal(
      (await app.inject({ method: 'POST', url: '/arex/nothing', headers: { origin: 'null' } })).statusCode,
      403,
    );
  });

  it('GET and PROPFIND from another site pass', async () => {
    const h = { ...U, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
    assert.equal((await app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs', headers: h })).statusCode, 200);
    assert.equal(
      (await app.inject({ method: 'PROPFIND', url: '/arex/rest/1.1/jobs/ID/session/', headers: h })).statusCode,
      200,
    );
  });
});
