import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.js';

const U = { 'x-test-dn': '/CN=user' };

describe('routing of {service}/rest', () => {
  const app = testApp();
  after(() => app.close());

  it('GET /rest lists 1.0 and 1.1 in ascending order (JSON forced array)', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest', headers: { accept: 'application/json' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), { version: ['1.0', '1.1'] });
  });

  it('GET /rest/ with a trailing slash works too, and XML is compact', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest/', headers: { accept: 'text/xml' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/xml');
    assert.equal(r.body, '<versions><version>1.0</version><version>1.1</version></versions>');
  });

  it('HEAD /rest has the headers of GET and no body', async () => {
    const g = await app.inject({ method: 'GET', url: '/arex/rest', headers: { accept: 'application/json' } });
    const h = await app.inject({ method: 'HEAD', url: '/arex/rest', headers: { accept: 'application/json' } });
    assert.equal(h.statusCode, 200);
    assert.equal(h.body, '');
    assert.equal(h.headers['content-length'], g.headers['content-length']);
  });

  it('versions need no identity, but presented invalid credentials are refused with 401', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest', headers: { 'x-test-dn': 'invalid' } });
    assert.equal(r.statusCode, 401);
  });

  for (const m of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
    it(`${m} /rest is 405 with Allow: GET, HEAD`, async () => {
      const r = await app.inject({ method: m, url: '/arex/rest', headers: U });
      assert.equal(r.statusCode, 405);
      assert.equal(r.headers.allow, 'GET, HEAD');
    });
  }

  it('an unknown version is 404 Version Not Supported', async () => {
    for (const v of ['2.0', '1', '1.2', 'v1.1', '1.1x']) {
      const r = await app.inject({
        method: 'GET',
        url: `/arex/rest/${v}/jobs`,
        headers: { ...U, accept: 'application/json' },
      });
      assert.equal(r.statusCode, 404, v);
      assert.equal(r.statusMessage, 'Version Not Supported');
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_HTTP_VERSION_NOT_SUPPORTED');
    }
  });

  it('{base} alone is 404 Not Found', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest/1.1', headers: U });
    assert.equal(r.statusCode, 404);
    assert.equal(r.statusMessage, 'Not Found');
  });

  it('unknown functionality is 404 Functionality Not Supported; paths are case-sensitive', async () => {
    for (const f of ['foo', 'Jobs', 'INFO', 'delegation']) {
      const r = await app.inject({ method: 'GET', url: `/arex/rest/1.1/${f}`, headers: U });
      assert.equal(r.statusCode, 404, f);
      assert.equal(r.statusMessage, 'Functionality Not Supported');
    }
    const r = await app.inject({ method: 'GET', url: '/AREX/rest', headers: U });
    assert.equal(r.statusCode, 404);
  });

  it('info/anything and delegations/id/anything are 404 Not Found', async () => {
    for (const p of ['info/x', 'delegations/abc/def']) {
      const r = await app.inject({ method: 'GET', url: `/arex/rest/1.0/${p}`, headers: U });
      assert.equal(r.statusCode, 404, p);
      assert.equal(r.statusMessage, 'Not Found');
    }
  });

  it('jobs/<id> alone and jobs/<id>/other are 404 with the A-REX reasons', async () => {
    let r = await app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs/abc', headers: U });
    assert.equal(r.statusCode, 404);
    assert.equal(r.statusMessage, 'Missing job sub-resource');
    r = await app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs/abc/other', headers: U });
    assert.equal(r.statusCode, 404);
    assert.equal(r.statusMessage, 'Wrong job sub-resource requested');
  });

  it('the absolute-form request target of the ARC client is routed by its path', async () => {
    const r = await app.inject({
      method: 'GET',
      url: 'https://ce.example.org:8443/arex/rest',
      headers: { accept: 'application/json' },
    });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(JSON.parse(r.body), { version: ['1.0', '1.1'] });
  });

  it('paths outside the service are 404', async () => {
    const r = await app.inject({ method: 'GET', url: '/other', headers: U });
    assert.equal(r.statusCode, 404);
  });

  it('a request id is returned on every answer', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest' });
    assert.match(String(r.headers['x-request-id']), /^[0-9a-f]{12}$/);
  });

  it('without Accept, answers are an HTML page a browser shows', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest' });
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(r.body, /^<!DOCTYPE html>.*<td class="k">version<\/td><td>1\.0<\/td>/s);
  });
});

describe('GET {base}/info', () => {
  const app = testApp();
  after(() => app.close());
  it('is public and answers the document', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest/1.1/info', headers: { accept: 'text/xml' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '<InfoRoot><Domains>x</Domains></InfoRoot>');
  });
  it('accepts schema=glue2, refuses others with 400; 1.0 crr is 501', async () => {
    assert.equal((await app.inject({ method: 'GET', url: '/arex/rest/1.1/info?schema=glue2' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/arex/rest/1.1/info?schema=crr' })).statusCode, 400);
    assert.equal((await app.inject({ method: 'GET', url: '/arex/rest/1.0/info?schema=crr' })).statusCode, 501);
    assert.equal((await app.inject({ method: 'GET', url: '/arex/rest/1.0/info?schema=bogus' })).statusCode, 400);
  });
  for (const m of ['POST', 'PUT', 'DELETE'] as const) {
    it(`${m} info is 405 with Allow`, async () => {
      const r = await app.inject({ method: m, url: '/arex/rest/1.1/info', headers: U });
      assert.equal(r.statusCode, 405);
      assert.equal(r.headers.allow, 'GET, HEAD');
    });
  }
  it('malformed percent-encoding in the query is a 400', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest/1.1/info?schema=%zz' });
    assert.equal(r.statusCode, 400);
  });
});

describe('lenient request headers', () => {
  it('a syntactically broken Content-Type (DIRAC sends x-pem-file) does not make the request fail', async () => {
    const { testApp: mk } = await import('../helpers/app.js');
    const app = mk({ delegation: { methods: { PUT: (req) => req.reply.code(200).send('put-ok') } } });
    try {
      for (const ct of ['x-pem-file', '', 'garbage']) {
        const r = await app.inject({
          method: 'PUT',
          url: '/arex/rest/1.0/delegations/abc',
          headers: { 'x-test-dn': '/CN=u', 'content-type': ct },
          payload: 'PEM',
        });
        assert.equal(r.statusCode, 200, `content-type ${JSON.stringify(ct)}`);
        assert.equal(r.body, 'put-ok');
      }
    } finally {
      await app.close();
    }
  });
});
