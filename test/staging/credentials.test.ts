// Delegated credentials against a real HTTPS server (certificates from the project's
// development PKI): the X.509 proxy chain as the TLS client certificate, JWTs as
// bearer tokens, renewal between attempts, and secrets kept out of results and logs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import type { CredentialSource } from '../../src/staging/credentials.js';
import type { StageInFile } from '../../src/staging/types.js';
import { TestServer, type ServerOptions } from './helpers/test-server.js';
import {
  makePki,
  mapCredentials,
  never,
  recordingLogger,
  stagingConfig,
  tempDir,
  type TestPki,
} from './helpers/fixtures.js';

type T = Parameters<typeof tempDir>[0];
let pki: TestPki;
const pkiDir = mkdtempSync(join(tmpdir(), 'ceres-staging-pki-'));

before(async () => {
  pki = await makePki(pkiDir);
});
after(() => rmSync(pkiDir, { recursive: true, force: true }));

const ALICE = 'Ceres Dev User';
const TOKEN = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0In0.sig-tok-123';

async function setup(
  t: T,
  credentials: CredentialSource,
  serverOpts: Omit<ServerOptions, 'tls'> = {},
  opts: { trust?: boolean; config?: ReturnType<typeof stagingConfig> } = {},
) {
  const server = await TestServer.start({
    ...serverOpts,
    tls: { key: pki.hostKey, cert: pki.hostCert, clientCa: pki.caPem },
  });
  t.after(() => server.close());
  const root = await tempDir(t);
  const sessionDir = join(root, 'session');
  await mkdir(sessionDir);
  const logger = recordingLogger();
  const stager = new Stager({
    config: opts.config ?? stagingConfig({ cache: { enabled: false } }),
    credentials,
    logger,
    ...(opts.trust === false ? {} : { ca: [pki.caPem] }),
  });
  const run = (files: StageInFile[], delegationId?: string, id = 'job1') =>
    stager.stageIn(
      { id, owner: '/CN=owner', sessionDir, files, ...(delegationId === undefined ? {} : { delegationId }) },
      never,
    );
  return { server, sessionDir, stager, run, logger };
}

const input = (name: string, source: string, extra: Partial<StageInFile> = {}): StageInFile => ({
  name,
  source,
  executable: false,
  ...extra,
});
const onlyFor =
  (who: string): ServerOptions['authorize'] =>
  (r) =>
    r.identity === who;

describe('X.509 delegations', () => {
  it("the job's proxy chain is the TLS client certificate", async (t) => {
    const creds = mapCredentials({ d1: pki.alice });
    const { server, sessionDir, run } = await setup(t, creds, { authorize: onlyFor(ALICE) });
    server.resources.set('/f', { body: Buffer.from('for alice') });
    const r = await run([input('f', server.url('/f'))], 'd1');
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(await readFile(join(sessionDir, 'f'), 'utf8'), 'for alice');
    assert.equal(server.hits[0]?.identity, ALICE);
    assert.deepEqual(creds.calls, [{ delegationId: 'd1', owner: '/CN=owner' }]);
  });

  it("a file's own delegation wins over the job's", async (t) => {
    const creds = mapCredentials({ d1: pki.alice, d2: pki.bob });
    const { server, run } = await setup(t, creds, { authorize: onlyFor('bob') });
    server.resources.set('/f', { body: Buffer.from('for bob') });
    const r = await run([input('f', server.url('/f'), { delegationId: 'd2' })], 'd1');
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(server.hits[0]?.identity, 'bob');
  });

  it('the credential is fetched again for each attempt, so a renewed delegation is used', async (t) => {
    let calls = 0;
    const creds: CredentialSource = { credentialFor: () => Promise.resolve(calls++ === 0 ? pki.alice : pki.bob) };
    const { server, run } = await setup(t, creds);
    server.resources.set('/f', { body: Buffer.from('x') });
    server.fault('/f', { kind: 'status', status: 503 });
    const r = await run([input('f', server.url('/f'))], 'd1');
    assert.equal(r.ok, true, r.failureReason);
    assert.deepEqual(
      server.hits.map((h) => h.identity),
      [ALICE, 'bob'],
    );
  });

  it('connections are reused within a job and closed after it', async (t) => {
    const config = stagingConfig({ cache: { enabled: false }, maxTransfersPerJob: 1 });
    const { server, run } = await setup(t, mapCredentials({ d1: pki.alice }), {}, { config });
    server.resources.set('/a', { body: Buffer.from('a') });
    server.resources.set('/b', { body: Buffer.from('b') });
    assert.equal((await run([input('a', server.url('/a')), input('b', server.url('/b'))], 'd1')).ok, true);
    assert.equal(server.tlsConnections, 1);
    assert.equal((await run([input('a2', server.url('/a'))], 'd1', 'job2')).ok, true);
    assert.equal(server.tlsConnections, 2);
  });

  it('without a credential the server refuses, and that is not retried', async (t) => {
    const { server, run } = await setup(t, mapCredentials({}), { authorize: onlyFor(ALICE) });
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await run([input('f', server.url('/f'))]);
    assert.equal(r.ok, false);
    assert.equal(r.failureReason, `Failed to download ${server.url('/f')}: 403 Forbidden`);
    assert.equal(server.hits.length, 1);
    assert.equal(server.hits[0]?.identity, undefined);
  });

  it('a delegation that cannot be found fails without contacting the server', async (t) => {
    const { server, run } = await setup(t, mapCredentials({}));
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await run([input('f', server.url('/f'))], 'gone-42');
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_NO_CREDENTIAL');
    assert.match(r.failureReason ?? '', /delegated credential gone-42 not found or expired; renew the delegation$/);
    assert.equal(server.hits.length, 0);
  });

  it('a credential source that throws is treated as no credential', async (t) => {
    const creds: CredentialSource = { credentialFor: () => Promise.reject(new Error('db down')) };
    const { server, run } = await setup(t, creds);
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await run([input('f', server.url('/f'))], 'd1');
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_NO_CREDENTIAL');
  });

  it('a server certificate not issued by a trusted CA is refused, not retried', async (t) => {
    const { server, run } = await setup(t, mapCredentials({ d1: pki.alice }), {}, { trust: false });
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await run([input('f', server.url('/f'))], 'd1');
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_TLS');
    assert.equal(r.files[0]?.attempts, 1);
    assert.match(r.failureReason ?? '', /server certificate not accepted/);
  });
});

describe('JWT delegations', () => {
  const tokenCreds = (): CredentialSource => mapCredentials({ t1: { kind: 'jwt', token: TOKEN } });

  it('the token is sent as a bearer token', async (t) => {
    const { server, run } = await setup(t, tokenCreds(), { authorize: (r) => r.bearer === TOKEN });
    server.resources.set('/f', { body: Buffer.from('x') });
    const r = await run([input('f', server.url('/f', 'davs'))], 't1');
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(server.hits[0]?.identity, undefined, 'no client certificate with a token');
  });

  it('the token is not sent to another host after a redirect', async (t) => {
    const { server, run } = await setup(t, tokenCreds());
    server.resources.set('/final', { body: Buffer.from('moved') });
    // localhost -> 127.0.0.1: same server, another host name (the host certificate has both).
    server.fault('/r', { kind: 'redirect', status: 302, location: `https://127.0.0.1:${server.port}/final` });
    const r = await run([input('f', server.url('/r'))], 't1');
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(server.hits.find((h) => h.path === '/r')?.authorization, `Bearer ${TOKEN}`);
    assert.equal(server.hits.find((h) => h.path === '/final')?.authorization, undefined);
  });

  it('a redirect from https to http is refused (the token and data would travel in clear)', async (t) => {
    const plain = await TestServer.start();
    t.after(() => plain.close());
    plain.resources.set('/f', { body: Buffer.from('x') });
    const { server, run } = await setup(t, tokenCreds());
    server.fault('/r', { kind: 'redirect', status: 301, location: plain.url('/f') });
    const r = await run([input('f', server.url('/r'))], 't1');
    assert.equal(r.ok, false);
    assert.equal(r.files[0]?.code, 'CE_ERR_STAGING_REDIRECT');
    assert.match(r.failureReason ?? '', /redirect from https to http refused/);
    assert.equal(plain.hits.length, 0);
  });

  it('tokens are never sent over plain http', async (t) => {
    const plain = await TestServer.start();
    t.after(() => plain.close());
    plain.resources.set('/f', { body: Buffer.from('x') });
    const root = await tempDir(t);
    const stager = new Stager({ config: stagingConfig({ cache: { enabled: false } }), credentials: tokenCreds() });
    const r = await stager.stageIn(
      { id: 'j', owner: 'o', sessionDir: root, files: [input('f', plain.url('/f'))], delegationId: 't1' },
      never,
    );
    assert.equal(r.ok, true, r.failureReason);
    assert.equal(plain.hits[0]?.authorization, undefined);
  });

  it('secrets never reach results or logs, even on failures', async (t) => {
    const creds = mapCredentials({ t1: { kind: 'jwt', token: TOKEN }, d1: pki.alice });
    const { server, run, logger } = await setup(t, creds, { authorize: () => false });
    server.resources.set('/f', { body: Buffer.from('x') });
    server.fault('/f', { kind: 'status', status: 500 });
    const r1 = await run([input('f', server.url('/f'))], 't1');
    const r2 = await run([input('g', server.url('/f'))], 'd1');
    assert.equal(r1.ok || r2.ok, false);
    const keyBody = pki.alice.keyPem.split('\n')[1] ?? 'unused';
    for (const text of [JSON.stringify([r1, r2]), logger.text()]) {
      assert.doesNotMatch(text, /tok-123/);
      assert.ok(!text.includes(keyBody), 'no key material');
      assert.doesNotMatch(text, /PRIVATE KEY|BEGIN CERTIFICATE/);
    }
    assert.ok(logger.lines.length > 0, 'something was logged');
  });
});
