// The bearer token of a request (Authorization header only, scheme case-insensitive,
// other schemes ignored), RFC 6750 challenge quoting, and the operation class, hence
// the scope, of each kind of request.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bearerOf, withoutQueryToken } from '../../../src/auth/token/bearer-header.js';
import { insufficientScope, invalidTokenHeaders } from '../../../src/auth/token/bearer-errors.js';
import { operationOf } from '../../../src/api/rest/operation.js';
import type { RestRoutes } from '../../../src/api/rest/router.js';
import type { Resource } from '../../../src/api/rest/resource.js';

/** The Authorization header of a request (absent: undefined). */
const req = (authorization?: string): string | undefined => authorization;

describe('bearer header, challenges, operations', () => {
  it('reads the token of a Bearer Authorization header only', () => {
    assert.deepEqual(bearerOf(req('Bearer abc.def.ghi')), { token: 'abc.def.ghi' });
    assert.deepEqual(bearerOf(req('bearer   abc.def.ghi  ')), { token: 'abc.def.ghi' });
    assert.deepEqual(bearerOf(req('BEARER abc')), { token: 'abc' });
    assert.equal(bearerOf(req()), undefined);
    assert.equal(bearerOf(req('Basic dXNlcjpwdw==')), undefined);
    assert.equal(bearerOf(req('Bearerabc')), undefined);
    assert.deepEqual(bearerOf(req('Bearer')), { malformed: true });
    assert.deepEqual(bearerOf(req('Bearer ')), { malformed: true });
    assert.deepEqual(bearerOf(req('Bearer a b')), { malformed: true });
  });

  it('redacts a query-string token in what is logged', () => {
    assert.equal(
      withoutQueryToken('/a/rest/1.1/jobs?access_token=abc.def&state=X'),
      '/a/rest/1.1/jobs?access_token=[redacted]&state=X',
    );
    assert.equal(withoutQueryToken('/a?x=1&ACCESS_TOKEN=abc'), '/a?x=1&ACCESS_TOKEN=[redacted]');
    assert.equal(withoutQueryToken('/a/rest/1.1/jobs?state=X'), '/a/rest/1.1/jobs?state=X');
  });

  it('quotes descriptions as RFC 6750 allows (no quote or backslash can break out)', () => {
    assert.equal(
      invalidTokenHeaders('bad "x" \\ y\n')['www-authenticate'],
      'Bearer realm="ceres", error="invalid_token", error_description="bad ?x? ? y?"',
    );
    const e = insufficientScope('compute.read', 'needs "compute.read"');
    assert.equal(e.statusCode, 403);
    assert.equal(
      e.headers['www-authenticate'],
      'Bearer realm="ceres", error="insufficient_scope", error_description="needs ?compute.read?", scope="compute.read"',
    );
  });

  it('maps each request to its operation class', () => {
    const r = (n: string): Resource => ({ methods: {}, ...(n === 'info' || n === 'versions' ? { public: true } : {}) });
    const routes: RestRoutes = {
      versions: r('versions'),
      info: r('info'),
      jobs: r('jobs'),
      session: r('session'),
      diagnose: r('diagnose'),
      delegations: r('delegations'),
      delegation: r('delegation'),
    };
    const cases: [keyof RestRoutes, string, string | undefined, string][] = [
      ['jobs', 'GET', undefined, 'read'],
      ['jobs', 'POST', 'new', 'create'],
      ['jobs', 'POST', 'info', 'read'],
      ['jobs', 'POST', 'status', 'read'],
      ['jobs', 'POST', 'delegations', 'read'],
      ['jobs', 'POST', 'restart', 'modify'],
      ['jobs', 'POST', 'kill', 'cancel'],
      ['jobs', 'POST', 'clean', 'cancel'],
      ['jobs', 'POST', 'bogus', 'read'],
      ['session', 'GET', undefined, 'read'],
      ['session', 'HEAD', undefined, 'read'],
      ['session', 'PROPFIND', undefined, 'read'],
      ['session', 'PUT', undefined, 'create'],
      ['session', 'MKCOL', undefined, 'create'],
      ['session', 'DELETE', undefined, 'cancel'],
      ['diagnose', 'GET', undefined, 'read'],
      ['delegations', 'GET', undefined, 'read'],
      ['delegations', 'POST', 'new', 'create'],
      ['delegation', 'POST', 'get', 'read'],
      ['delegation', 'POST', 'renew', 'create'],
      ['delegation', 'PUT', undefined, 'create'],
      ['delegation', 'POST', 'delete', 'create'],
    ];
    for (const [k, m, a, op] of cases) assert.equal(operationOf(routes, routes[k], m, a), op, `${k} ${m} ${a ?? ''}`);
  });
});
