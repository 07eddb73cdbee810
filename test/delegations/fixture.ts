/**
 * A delegation service over a real SQLite database, a real key directory and a test
 * PKI (one trusted CA, users alice and bob with RFC 3820 proxies, and a user of an
 * untrusted CA), mounted in the real Fastify app with the header authenticator. The
 * clock can be moved (`clock.offset`) to exercise expiry without waiting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildConfig } from '../../src/config/load.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { createDelegations, type DelegationsWiring } from '../../src/service/delegations.js';
import { trustStoreFromPems, type TrustStore } from '../../src/pki/trust-store.js';
import { signProxyFromCsr, type ProxyParams } from '../../src/pki/issue.js';
import { makeCa, makeProxy, makeUser, type TestCred } from '../helpers/pki.js';
import { buildApp } from '../../src/api/app.js';
import { headerAuthenticator, testRoutes } from '../helpers/app.js';
import { rfc4514Of } from '../../src/pki/rfc4514.js';

export interface User {
  readonly dn: string;
  /** The owner key (RFC 4514 subject) the service keys the user's delegations by. */
  readonly owner: string;
  readonly cert: TestCred;
  readonly proxy: TestCred;
  /** Headers that make the test authenticator call as this user. */
  readonly h: Record<string, string>;
}

export interface Fixture {
  readonly dir: string;
  readonly keyDir: string;
  readonly db: Db;
  readonly trust: TrustStore;
  readonly wiring: DelegationsWiring;
  readonly app: FastifyInstance;
  readonly alice: User;
  readonly bob: User;
  /** A user whose CA is not trusted. */
  readonly mallory: User;
  readonly clock: { offset: number };
  /** Every log line of the app and the delegation service (level trace, no redaction). */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface Pki {
  /** The trusted CA (to issue a host certificate for a test server). */
  readonly ca: TestCred;
  readonly trust: TrustStore;
  readonly alice: User;
  readonly bob: User;
  readonly mallory: User;
}

let pkiOnce: Promise<Pki> | undefined;

/** The test PKI, made once per test file (key generation is the slow part). */
export function testPki(): Promise<Pki> {
  pkiOnce ??= (async () => {
    const ca = await makeCa();
    const otherCa = await makeCa({ dn: '/DC=org/DC=elsewhere/CN=Other CA' });
    const user = async (issuer: TestCred, dn: string): Promise<User> => {
      const cert = await makeUser(issuer, { dn });
      const proxy = await makeProxy(cert);
      return {
        dn: cert.cert.subjectOneline,
        owner: rfc4514Of(cert.cert.subject),
        cert,
        proxy,
        h: { 'x-test-dn': cert.cert.subjectOneline },
      };
    };
    return {
      ca,
      trust: trustStoreFromPems([ca.pem]),
      alice: await user(ca, '/DC=org/DC=ceres-test/CN=Alice'),
      bob: await user(ca, '/DC=org/DC=ceres-test/CN=Bob'),
      mallory: await user(otherCa, '/DC=org/DC=ceres-test/CN=Alice'),
    };
  })();
  return pkiOnce;
}

export async function makeFixture(delegations: Record<string, unknown> = {}): Promise<Fixture> {
  const pki = await testPki();
  const dir = mkdtempSync(join(tmpdir(), 'ceres-deleg-'));
  const keyDir = join(dir, 'delegations');
  const db = openDatabase(join(dir, 'ceres.db'));
  const config = buildConfig({ stateDir: dir, delegations }, {}, dir);
  const clock = { offset: 0 };
  const logs: string[] = [];
  const log = pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) });
  const wiring = createDelegations({
    config,
    db,
    dir: keyDir,
    log,
    trust: pki.trust,
    now: () => Date.now() + clock.offset,
  });
  const app = buildApp({
    mountPoint: '/arex',
    routes: testRoutes({ delegations: wiring.collection, delegation: wiring.item }),
    authenticate: headerAuthenticator,
    logger: log,
    origin: () => 'https://localhost:8443',
  });
  await app.ready();
  return {
    dir,
    keyDir,
    db,
    trust: pki.trust,
    wiring,
    app,
    alice: pki.alice,
    bob: pki.bob,
    mallory: pki.mallory,
    clock,
    logs,
    async close() {
      await app.close();
      await wiring.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sign a delegation request with the user's proxy, as arcproxy/pyarcrest do: new proxy + the signer's chain. */
export async function signAs(user: User, csrPem: string, opts: ProxyParams = {}): Promise<string> {
  const signed = await signProxyFromCsr(csrPem, user.proxy.pem + user.cert.pem, user.proxy.keyPem, opts);
  return signed.chainPem;
}

export const base = (v: '1.0' | '1.1' = '1.1'): string => `/arex/rest/${v}/delegations`;

/** A syntactically valid JWT (not signed by anyone we trust: the service does not verify). */
export function fakeJwt(claims: Record<string, unknown> = {}): string {
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'RS256', typ: 'JWT', kid: 'k1' })}.${b64({ sub: 'alice', iss: 'https://issuer.example', exp: Math.floor(Date.now() / 1000) + 3600, ...claims })}.${Buffer.from('signature-bytes').toString('base64url')}`;
}
