// Doubled slashes: collapsed in the route part of a request target (A-REX-compatible),
// kept verbatim in a session file path (where an empty segment is refused) and in the query.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.js';
import { collapseRouteSlashes } from '../../src/http/route-slashes.js';
import type { Resource } from '../../src/api/rest/resource.js';

const U = { 'x-test-dn': '/CN=user' };
/** Echoes what the router handed the resource. */
const echo: Resource = {
  methods: {
    GET: (req) => req.reply.code(200).send(JSON.stringify({ rest: req.rest, q: Object.fromEntries(req.query) })),
  },
};

describe('collapseRouteSlashes', () => {
  const cases: [string, string][] = [
    ['/arex/rest/1.0//jobs', '/arex/rest/1.0/jobs'],
    ['//arex//rest///1.1/info', '/arex/rest/1.1/info'],
    ['/arex/rest/1.0/jobs//', '/arex/rest/1.0/jobs/'],
    ['/arex/rest/1.0//jobs?x=a//b', '/arex/rest/1.0/jobs?x=a//b'],
    ['/arex/rest/1.0//jobs#a//b', '/arex/rest/1.0/jobs#a//b'],
    ['/arex/rest/1.0//jobs/ID//session', '/arex/rest/1.0/jobs/ID/session'],
    ['/arex/rest/1.0//jobs/ID//session/', '/arex/rest/1.0/jobs/ID/session/'],
    ['/arex/rest/1.0//jobs/ID/session//a', '/arex/rest/1.0/jobs/ID/session//a'],
    ['/arex/rest/1.0/jobs/ID/session/a//b//', '/arex/rest/1.0/jobs/ID/session/a//b//'],
    ['/arex//rest/1.0/jobs/ID//session/d//f?x=1', '/arex/rest/1.0/jobs/ID/session/d//f?x=1'],
    ['/arex/rest/1.0/jobs//ID/diagnose//errors', '/arex/rest/1.0/jobs/ID/diagnose/errors'],
    ['/arex/rest/1.0/delegations//abc', '/arex/rest/1.0/delegations/abc'],
    ['//', '/'],
    ['/arex/rest/1.0/jobs', '/arex/rest/1.0/jobs'],
  ];
  for (const [input, want] of cases)
    it(`${input} -> ${want}`, () => assert.equal(collapseRouteSlashes(input, 2), want));

  it('a multi-segment mount point counts its segments', () => {
    assert.equal(collapseRouteSlashes('/a/b/rest/1.0//jobs/ID/session//x', 3), '/a/b/rest/1.0/jobs/ID/session//x');
  });
});

describe('doubled slashes through the app', () => {
  const app = testApp({ jobs: echo, session: echo, diagnose: echo, delegation: echo });
  after(() => app.close());

  it('/arex/rest/1.0//jobs reaches the jobs collection (404 before)', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest/1.0//jobs', headers: U });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), { rest: [], q: {} });
  });

  it('an absolute-form target with doubled slashes and a query', async () => {
    const r = await app.inject({
      method: 'GET',
      url: 'https://ce.example.org:8443/arex//rest/1.1//jobs?state=a//b',
      headers: U,
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(JSON.parse(r.body).q, { state: 'a//b' });
  });

  it('the session path keeps its empty segments for the session rules to refuse', async () => {
    const r = await app.inject({ method: 'GET', url: '/arex/rest/1.0//jobs//ID//session//a//b', headers: U });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(JSON.parse(r.body).rest, ['ID', '', 'a', '', 'b']);
  });

  it('diagnose names and delegation ids behind doubled slashes', async () => {
    assert.deepEqual(
      JSON.parse(
        (await app.inject({ method: 'GET', url: '/arex/rest/1.0/jobs/ID//diagnose//errors', headers: U })).body,
      ).rest,
      ['ID', 'errors'],
    );
    assert.deepEqual(
      JSON.parse((await app.inject({ method: 'GET', url: '/arex/rest/1.1//delegations//D1', headers: U })).body).rest,
      ['D1'],
    );
  });

  it('versions and unknown functionality keep their answers', async () => {
    assert.equal((await app.inject({ method: 'GET', url: '/arex//rest//' })).statusCode, 200);
    const r = await app.inject({ method: 'GET', url: '/arex/rest/1.0//nothing', headers: U });
    assert.equal(r.statusCode, 404);
    assert.equal(r.statusMessage, 'Functionality Not Supported');
  });
});
