// Every route × method pair: the real resources' method tables decide; a method a
// resource lacks is 405 with an Allow header listing exactly what it supports, and a
// supported one is never 405. Handlers are the real ones with inert dependencies, so
// supported methods may fail later (404, 400): the matrix only checks routing.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.js';
import { versionsResource } from '../../src/api/rest/versions/index.js';
import { infoResource } from '../../src/api/rest/info/index.js';
import { jobsResource } from '../../src/api/rest/jobs/index.js';
import { sessionResource } from '../../src/api/rest/session/index.js';
import { diagnoseResource } from '../../src/api/rest/diagnose/index.js';
import { delegationsResources } from '../../src/api/rest/delegations/index.js';
import { el } from '../../src/doc/element.js';
import { ceError } from '../../src/errors/ce-error.js';
import type { Resource } from '../../src/api/rest/resource.js';

const notFound = (): never => {
  throw ceError('CE_ERR_JOB_NOT_FOUND');
};
const jobs = { visible: notFound };
const deleg = delegationsResources({
  service: new Proxy({}, { get: () => notFound }) as never,
  maxCertificateBodyBytes: 1024,
});
const routes = {
  versions: versionsResource,
  info: infoResource({ document: () => el('InfoRoot') }),
  jobs: jobsResource({
    jobs: { list: () => [], submit: notFound } as never,
    actions: {} as never,
    restStates: ['FINISHED'],
    maxIdsPerRequest: 10,
    maxControlBodyBytes: 1024,
    maxSubmitBodyBytes: 1024,
  }),
  session: sessionResource({ jobs, sessions: {} as never, files: {} as never }),
  diagnose: diagnoseResource({ jobs, control: {} as never }),
  delegations: deleg.collection,
  delegation: deleg.item,
};

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'] as const;

const TABLE: [string, Resource, string][] = [
  ['/arex/rest', routes.versions, 'GET, HEAD'],
  ['/arex/rest/1.0/info', routes.info, 'GET, HEAD'],
  ['/arex/rest/1.1/info', routes.info, 'GET, HEAD'],
  ['/arex/rest/1.1/jobs', routes.jobs, 'GET, POST, HEAD'],
  ['/arex/rest/1.0/jobs/abc/session/f', routes.session, 'GET, PUT, PATCH, DELETE, PROPFIND, HEAD'],
  ['/arex/rest/1.1/jobs/abc/diagnose/errors', routes.diagnose, 'GET, HEAD'],
  ['/arex/rest/1.1/delegations', routes.delegations, 'GET, POST, HEAD'],
  ['/arex/rest/1.0/delegations/abc', routes.delegation, 'POST, PUT'],
];

describe('route × method matrix', () => {
  const app = testApp(routes);
  after(() => app.close());
  for (const [url, resource, allow] of TABLE) {
    for (const method of METHODS) {
      const supported = method in resource.methods || (method === 'HEAD' && 'GET' in resource.methods);
      it(`${method} ${url} → ${supported ? 'routed' : `405, Allow: ${allow}`}`, async () => {
        const r = await app.inject({ method, url, headers: { 'x-test-dn': '/CN=u', accept: 'application/json' } });
        if (supported) assert.notEqual(r.statusCode, 405);
        else {
          assert.equal(r.statusCode, 405);
          assert.equal(r.headers.allow, allow);
          if (method !== 'HEAD') assert.equal(JSON.parse(r.body).code, 'CE_ERR_HTTP_METHOD_NOT_ALLOWED');
        }
      });
    }
  }
});
