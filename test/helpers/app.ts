/**
 * Test seam: build the Fastify app with a caller taken from the `x-test-dn` header.
 * This authenticator exists only in tests; production uses the verified TLS chain.
 */
import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import type { Authenticator } from '../../src/http/caller.js';
import { ownerKeyOfStored } from '../../src/pki/rfc4514.js';
import type { RestRoutes } from '../../src/api/rest/router.js';
import type { Resource } from '../../src/api/rest/resource.js';
import { versionsResource } from '../../src/api/rest/versions/index.js';
import { el } from '../../src/doc/element.js';
import { infoResource } from '../../src/api/rest/info/index.js';

export const headerAuthenticator: Authenticator = (req: IncomingMessage) => {
  const dn = req.headers['x-test-dn'];
  if (typeof dn !== 'string' || dn === '')
    return { ok: false, code: 'CE_ERR_AUTH_NO_CREDENTIALS', reason: 'no test identity' };
  if (dn === 'invalid') return { ok: false, code: 'CE_ERR_AUTH_CERT_INVALID', reason: 'test: invalid credentials' };
  // The owner key a certificate with this one-line subject gets (src/pki/rfc4514.ts).
  // Optional VOMS FQANs, authorization groups and monitored VOs, comma-separated.
  const list = (h: string | string[] | undefined) =>
    typeof h === 'string' && h !== '' ? { value: h.split(',') } : undefined;
  const fqans = list(req.headers['x-test-fqans']);
  const groups = list(req.headers['x-test-groups']);
  // The VOs the caller monitors, as the authorizer grants them (src/authz/monitors.ts).
  const monitors = list(req.headers['x-test-monitors']);
  return {
    ok: true,
    caller: {
      dn,
      owner: ownerKeyOfStored(dn),
      kind: 'x509',
      ...(fqans !== undefined ? { fqans: fqans.value } : {}),
      ...(groups !== undefined ? { groups: groups.value } : {}),
      ...(monitors !== undefined ? { monitors: monitors.value } : {}),
    },
  };
};

export const dummy: Resource = { methods: { GET: (req) => req.reply.code(200).send('dummy') } };

export function testRoutes(overrides: Partial<RestRoutes> = {}): RestRoutes {
  return {
    versions: versionsResource,
    info: infoResource({ document: () => el('InfoRoot', el('Domains', 'x')) }),
    jobs: dummy,
    session: dummy,
    diagnose: dummy,
    delegations: dummy,
    delegation: dummy,
    ...overrides,
  };
}

export function testApp(overrides: Partial<RestRoutes> = {}, authenticate: Authenticator = headerAuthenticator) {
  return buildApp({
    mountPoint: '/arex',
    routes: testRoutes(overrides),
    authenticate,
    logger: pino({ level: 'silent' }),
    origin: () => 'https://localhost:8443',
  });
}
