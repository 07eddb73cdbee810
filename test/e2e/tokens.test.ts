// Bearer tokens against the real service over real TLS, without client certificates:
// the development issuer (`ceres token issue`, a real child process) and an issuer found
// by discovery on a local https server; the whole job life cycle with a token only;
// every refusal with its status, RFC 6750 header and reason; scopes per operation; two
// token subjects isolated; certificate and token together; the token as the job's
// credential (renewable); key rotation; pyarcrest's token requests replayed; and no
// token ever in the service's log.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initDevPki } from '../../src/pki/dev-pki.js';
import { signProxyFromCsr } from '../../src/pki/issue.js';
import { pemBlocks, toPem } from '../../src/pki/certificate.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { hmac, newKey, sign, startJwksServer, unsigned, type JwksServer, type TestKey } from '../auth/token/fixture.js';
import { until } from '../helpers/poll.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const ALL = 'compute.create compute.read compute.modify compute.cancel';
const FINAL = ['FINISHED', 'FAILED', 'KILLED'];
const UPLOAD_JOB =
  '&(executable="/bin/sh")(arguments="-c" "tr a-z A-Z < in.txt")(inputfiles=("in.txt" ""))(stdout="out.txt")';
const WAITING_JOB = '&(executable="/bin/echo")(inputfiles=("never" ""))';

describe('bearer tokens (real service, no client certificate)', () => {
  let stateDir: string;
  let pkiDir: string;
  let ceres: RunningCeres;
  let jwks: JwksServer;
  let k1: TestKey;
  let k2: TestKey;
  const used: string[] = [];
  const clients: Client[] = [];

  const issue = async (sub: string, scope = ALL, extra: string[] = []): Promise<string> => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      MAIN,
      'token',
      'issue',
      '--dir',
      pkiDir,
      '--sub',
      sub,
      '--scope',
      scope,
      ...extra,
    ]);
    const t = stdout.trim();
    used.push(t);
    return t;
  };
  const tokenClient = (token: string): Client => {
    used.push(token);
    const c = Client.withToken(ceres, token);
    clients.push(c);
    return c;
  };
  const raw = (
    token: string | undefined,
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) => {
    const c = token === undefined ? new Client(ceres.url, null, join(pkiDir, 'ca.pem')) : tokenClient(token);
    if (token === undefined) clients.push(c);
    return c.req(method, path, body, headers);
  };

  before(async () => {
    stateDir = tempDir('tokens');
    pkiDir = (await initDevPki(join(stateDir, 'pki'))).dir;
    [k1, k2] = await Promise.all([newKey('RS256'), newKey('ES256')]);
    jwks = await startJwksServer(pkiDir, [k1]);
    ceres = await startCeres({
      stateDir,
      config: { log: { level: 'debug' }, tokens: { issuers: [{ issuer: jwks.issuer }], keysRefreshSeconds: 1 } },
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await stopCeres(ceres);
    await jwks.close();
    removeDir(stateDir);
  });

  it('start prints the development token issuer, whose tokens `ceres token issue` makes', async () => {
    assert.match(
      ceres.output(),
      /^ceres: token issuer https:\/\/ceres-dev\.invalid\/issuer\/[\w-]+ \(ceres token issue\)$/m,
    );
    const r = await raw(await issue('alice', 'compute.read'), 'GET', '/rest/1.1/jobs');
    assert.equal(r.status, 200, r.text);
  });

  it('a whole job life cycle with a token only: submit, upload, status, download, kill, clean', async () => {
    const c = tokenClient(await issue('alice'));
    const [job] = await c.submit(UPLOAD_JOB);
    assert.equal(job['status-code'], '201', JSON.stringify(job));
    const put = await c.req('PUT', `/rest/1.1/jobs/${job.id}/session/in.txt`, 'hello token\n');
    assert.equal(put.status, 200, put.text);
    assert.equal((await c.waitFor([job.id], FINAL)).get(job.id), 'FINISHED');
    const out = await c.req('GET', `/rest/1.1/jobs/${job.id}/session/out.txt`);
    assert.equal(out.text, 'HELLO TOKEN\n');
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${job.id}/diagnose/errors`)).status, 200);
    const list = await c.req('GET', '/rest/1.1/jobs');
    assert.ok((list.json().job as any[]).some((j) => j.id === job.id));

    const [waiting] = await c.submit(WAITING_JOB);
    const [killed] = await c.action('kill', [waiting.id]);
    assert.equal(killed['status-code'], '202');
    assert.ok(FINAL.includes((await c.waitFor([waiting.id], FINAL)).get(waiting.id) as string));
    for (const id of [job.id, waiting.id]) assert.equal((await c.action('clean', [id]))[0]['status-code'], '202');
    await until(
      async () => (await c.status([job.id, waiting.id])).get(job.id) === 'HTTP404',
      'the cleaned job to disappear',
      30_000,
    );
  });

  it('no credentials: 401 with the bearer challenge; public resources stay public', async () => {
    const r = await raw(undefined, 'GET', '/rest/1.1/jobs');
    assert.equal(r.status, 401);
    assert.equal(r.headers['www-authenticate'], 'Bearer realm="ceres"');
    assert.equal((await raw(undefined, 'GET', '/rest/1.1/info')).status, 200);
  });

  it('bad tokens: 401 invalid_token naming the failed check, on public resources too', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, RegExp][] = [
      ['garbage', /not a JWT/],
      [unsigned({ iss: jwks.issuer, sub: 'x', aud: 'https://wlcg.cern.ch/jwt/v1/any', exp: now + 60 }), /alg none/],
      [await hmac(new TextEncoder().encode('secret-secret-secret-secret-secret'), { iss: jwks.issuer }), /symmetric/],
      [await sign(k2, { iss: jwks.issuer, kid: 'nobody-knows' }), /no key of the token issuer/],
      [await sign(k1, { iss: 'https://untrusted.example' }), /issuer is not trusted/],
      [await sign(k1, { iss: jwks.issuer, aud: 'https://another-ce.example' }), /audience/],
      [await sign(k1, { iss: jwks.issuer, exp: -3600, iat: -7200 }), /expired/],
      [await sign(k1, { iss: jwks.issuer, nbf: 3600 }), /not yet valid/],
      [await sign(k1, { iss: jwks.issuer, ver: '2.0' }), /wlcg\.ver/],
    ];
    for (const [token, reason] of cases) {
      for (const path of ['/rest/1.1/jobs', '/rest/1.1/info']) {
        const r = await raw(token, 'GET', path);
        assert.equal(r.status, 401, `${reason} ${path}`);
        const h = String(r.headers['www-authenticate']);
        assert.match(h, /^Bearer realm="ceres", error="invalid_token", error_description="[^"]+"$/);
        assert.match(h, reason);
        assert.ok(!h.includes(token) && !r.text.includes(token));
      }
    }
    const empty = await raw(undefined, 'GET', '/rest/1.1/jobs', undefined, { authorization: 'Bearer ' });
    assert.equal(empty.status, 401);
    assert.match(String(empty.headers['www-authenticate']), /invalid_token/);
  });

  it('the service URL is an accepted audience; tokens from the discovered issuer work', async () => {
    const t = await sign(k1, { iss: jwks.issuer, aud: ceres.url, scope: 'compute.read' });
    assert.equal((await raw(t, 'GET', '/rest/1.1/jobs')).status, 200);
    const origin = await sign(k1, { iss: jwks.issuer, aud: new URL(ceres.url).origin, scope: 'compute.read' });
    assert.equal((await raw(origin, 'GET', '/rest/1.1/jobs')).status, 200);
  });

  it('scopes per operation: 403 insufficient_scope with the scope needed', async () => {
    const reader = tokenClient(await issue('scoped', 'compute.read'));
    const creator = tokenClient(await issue('scoped', 'compute.create'));
    const [job] = await creator.submit(WAITING_JOB);
    assert.equal(job['status-code'], '201');
    const expect403 = async (c: Client, method: string, path: string, scope: string, body?: string) => {
      const r = await c.req(method, path, body, body === undefined ? {} : { 'content-type': 'application/json' });
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      assert.match(
        String(r.headers['www-authenticate']),
        new RegExp(
          `^Bearer realm="ceres", error="insufficient_scope", error_description="[^"]*${scope}[^"]*", scope="${scope}"$`,
        ),
      );
    };
    const ids = JSON.stringify({ job: [{ id: job.id }] });
    await expect403(reader, 'POST', '/rest/1.1/jobs?action=new', 'compute.create', WAITING_JOB);
    await expect403(reader, 'PUT', `/rest/1.1/jobs/${job.id}/session/never`, 'compute.create', 'x');
    await expect403(reader, 'POST', '/rest/1.1/delegations?action=new&type=jwt', 'compute.create');
    await expect403(reader, 'POST', '/rest/1.1/jobs?action=restart', 'compute.modify', ids);
    await expect403(reader, 'POST', '/rest/1.1/jobs?action=kill', 'compute.cancel', ids);
    await expect403(reader, 'POST', '/rest/1.1/jobs?action=clean', 'compute.cancel', ids);
    await expect403(reader, 'DELETE', `/rest/1.1/jobs/${job.id}/session/never`, 'compute.cancel');
    await expect403(creator, 'GET', '/rest/1.1/jobs', 'compute.read');
    await expect403(creator, 'POST', '/rest/1.1/jobs?action=status', 'compute.read', ids);
    await expect403(creator, 'GET', `/rest/1.1/jobs/${job.id}/diagnose/errors`, 'compute.read');
    // The reader sees the job the creator (same issuer and subject) submitted.
    assert.notEqual((await reader.status([job.id])).get(job.id), 'HTTP404');
    // A token without any compute scope, and no authorization groups configured.
    const r = await raw(await issue('noscope', 'openid'), 'GET', '/rest/1.1/jobs');
    assert.equal(r.status, 403);
    assert.match(String(r.headers['www-authenticate']), /insufficient_scope.*no compute scope/);
  });

  it('two token subjects (and one subject of two issuers) are isolated from each other', async () => {
    const alice = tokenClient(await issue('alice'));
    const bob = tokenClient(await issue('bob'));
    const otherAlice = tokenClient(await sign(k1, { iss: jwks.issuer, sub: 'alice', scope: ALL }));
    const [job] = await alice.submit(WAITING_JOB);
    for (const c of [bob, otherAlice]) {
      assert.equal((await c.status([job.id])).get(job.id), 'HTTP404');
      assert.ok(
        !(
          c === bob ? (await c.req('GET', '/rest/1.1/jobs')).text : (await c.req('GET', '/rest/1.1/jobs')).text
        ).includes(job.id),
      );
      assert.equal((await c.req('GET', `/rest/1.1/jobs/${job.id}/session/`)).status, 404);
      assert.equal((await c.action('kill', [job.id]))[0]['status-code'], '404');
    }
    assert.notEqual((await alice.status([job.id])).get(job.id), 'HTTP404');
  });

  it('certificate and token together: the token owns and is authorized', async () => {
    const token = await issue('carol', 'compute.read compute.create');
    const both = new Client(ceres.url, join(pkiDir, 'userproxy.pem'), join(pkiDir, 'ca.pem'), {
      authorization: `Bearer ${token}`,
    });
    const certOnly = Client.forUser(ceres);
    const tokenOnly = tokenClient(token);
    clients.push(both, certOnly);
    const [job] = await both.submit(WAITING_JOB);
    assert.equal(job['status-code'], '201');
    assert.notEqual((await tokenOnly.status([job.id])).get(job.id), 'HTTP404');
    assert.equal((await certOnly.status([job.id])).get(job.id), 'HTTP404');
    // The token's scopes bind even with a certificate: no compute.cancel.
    assert.equal(
      (
        await both.req('POST', '/rest/1.1/jobs?action=kill', JSON.stringify({ job: [{ id: job.id }] }), {
          'content-type': 'application/json',
        })
      ).status,
      403,
    );
    // A bad token is refused, not passed over for the certificate.
    const bad = new Client(ceres.url, join(pkiDir, 'userproxy.pem'), join(pkiDir, 'ca.pem'), {
      authorization: 'Bearer not.a.token',
    });
    clients.push(bad);
    assert.equal((await bad.req('GET', '/rest/1.1/jobs')).status, 401);
  });

  it('the token serves the job: one renewable token delegation per owner, used by its jobs', async () => {
    const t1 = await issue('dora', ALL, ['--lifetime', '600']);
    const c = tokenClient(t1);
    const [a] = await c.submit(WAITING_JOB);
    const [d] = await c.action('delegations', [a.id]);
    const ids = ([] as string[]).concat(d.delegation_id);
    assert.equal(ids.length, 1, JSON.stringify(d));
    const id = ids[0] as string;
    const get = async () => (await c.req('POST', `/rest/1.1/delegations/${id}?action=get`)).text;
    assert.equal(await get(), t1);
    // A later submission with a longer-lived token: the same delegation, now holding it.
    const t2 = await issue('dora', ALL, ['--lifetime', '1200']);
    const c2 = tokenClient(t2);
    const [b] = await c2.submit(WAITING_JOB);
    assert.deepEqual(([] as string[]).concat((await c2.action('delegations', [b.id]))[0].delegation_id), [id]);
    assert.equal(await get(), t2);
    // The client renews it with a token of its choice (pyarcrest style).
    const t3 = await issue('dora', 'compute.read', ['--lifetime', '1800']);
    const r = await c.req('POST', `/rest/1.1/delegations/${id}?action=renew`, undefined, {
      'x-token-delegation': `Bearer ${t3}`,
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(await get(), t3);
    // A job naming its own delegation keeps it.
    const own = await c.req('POST', '/rest/1.1/delegations?action=new&type=jwt', undefined, {
      'x-token-delegation': t1,
    });
    const ownId = String(own.headers.location).split('/').pop() as string;
    const sub = await c.req('POST', `/rest/1.1/jobs?action=new&delegation_id=${ownId}`, WAITING_JOB);
    const jid = sub.json().job[0].id as string;
    assert.deepEqual(([] as string[]).concat((await c.action('delegations', [jid]))[0].delegation_id), [ownId]);
  });

  it('a token caller delegates an X.509 proxy (for data staging); an unverifiable chain is still refused', async () => {
    const c = tokenClient(await issue('erin', 'compute.create compute.read'));
    const proxyFile = readFileSync(join(pkiDir, 'userproxy.pem'), 'utf8');
    const certs = pemBlocks(proxyFile).map((d) => toPem(d));
    const key = /-----BEGIN (?:RSA )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA )?PRIVATE KEY-----\n?/.exec(
      proxyFile,
    )?.[0] as string;
    const newDelegation = async () => {
      const r = await c.req('POST', '/rest/1.1/delegations?action=new');
      assert.equal(r.status, 201, r.text);
      return { id: String(r.headers.location).split('/').pop() as string, csr: r.text };
    };
    const d = await newDelegation();
    const signed = await signProxyFromCsr(d.csr, certs.join(''), key);
    const put = await c.req('PUT', `/rest/1.1/delegations/${d.id}`, signed.chainPem, {
      'content-type': 'application/x-pem-file',
    });
    assert.equal(put.status, 200, put.text);
    const listed = await c.req('GET', '/rest/1.1/delegations');
    assert.ok(JSON.stringify(listed.json()).includes(d.id));
    // The proxy alone: a token caller has no connection chain to complete it with.
    const lone = await newDelegation();
    const alone = await signProxyFromCsr(lone.csr, certs.join(''), key);
    const refused = await c.req(
      'PUT',
      `/rest/1.1/delegations/${lone.id}`,
      toPem(pemBlocks(alone.chainPem)[0] as Buffer),
      { 'content-type': 'application/x-pem-file' },
    );
    assert.ok(refused.status >= 400 && refused.status < 500, `${refused.status} ${refused.text}`);
  });

  it('a rotated issuer key is fetched on first use; a flood of unknown keys costs one fetch per interval', async () => {
    jwks.keys = [k1, k2];
    const t = await sign(k2, { iss: jwks.issuer, scope: 'compute.read' });
    await until(
      async () => (await raw(t, 'GET', '/rest/1.1/jobs')).status === 200,
      'the rotated key to be fetched',
      10_000,
    );
    const start = Date.now();
    const before = jwks.hits.jwks;
    const forged = await Promise.all(
      Array.from({ length: 40 }, (_, i) => sign(k2, { iss: jwks.issuer, kid: `forged-${i}` })),
    );
    const c = tokenClient(await issue('x', 'compute.read'));
    for (const f of forged)
      assert.equal((await c.req('GET', '/rest/1.1/jobs', undefined, { authorization: `Bearer ${f}` })).status, 401);
    const seconds = (Date.now() - start) / 1000;
    assert.ok(jwks.hits.jwks - before <= Math.ceil(seconds) + 1, `${jwks.hits.jwks - before} fetches in ${seconds} s`);
  });

  it("replays pyarcrest's token requests (1.1): versions, info, jwt delegation, ADL submission, upload, status, download, renew, kill, clean", async () => {
    const token = await issue('pyarcrest', ALL);
    const c = tokenClient(token);
    const versions = await c.req('GET', '/rest');
    assert.equal(versions.status, 200);
    assert.ok(([] as string[]).concat(versions.json().version).includes('1.1'));
    assert.equal((await c.req('GET', '/rest/1.1/info')).status, 200);
    const deleg = await c.req('POST', '/rest/1.1/delegations?action=new&type=jwt', undefined, {
      'x-token-delegation': `Bearer ${token}`,
    });
    assert.equal(deleg.status, 201);
    const did = String(deleg.headers.location).split('/').pop() as string;
    const adl =
      '<ActivityDescription xmlns="http://www.eu-emi.eu/es/2010/12/adl" xmlns:nordugrid-adl="http://www.nordugrid.org/es/2011/12/nordugrid-adl">' +
      '<ActivityIdentification><Name>pyarcrest-token</Name></ActivityIdentification>' +
      '<Application><Executable><Path>/bin/cat</Path><Argument>in.txt</Argument></Executable><Output>out.txt</Output></Application>' +
      `<DataStaging><nordugrid-adl:DelegationID>${did}</nordugrid-adl:DelegationID><InputFile><Name>in.txt</Name></InputFile><OutputFile><Name>out.txt</Name></OutputFile></DataStaging></ActivityDescription>`;
    const sub = await c.req('POST', `/rest/1.1/jobs?action=new&delegation_id=${did}`, adl, {
      'content-type': 'application/xml',
    });
    assert.equal(sub.status, 201, sub.text);
    const [job] = sub.json().job;
    assert.equal(job['status-code'], '201');
    assert.equal((await c.req('PUT', `/rest/1.1/jobs/${job.id}/session/in.txt`, 'from pyarcrest\n')).status, 200);
    const one = JSON.stringify({ job: { id: job.id } });
    const st = await c.req('POST', '/rest/1.1/jobs?action=status', one, { 'content-type': 'application/json' });
    assert.equal(st.status, 201);
    assert.equal(st.json().job[0]['status-code'], '200');
    assert.equal((await c.waitFor([job.id], FINAL)).get(job.id), 'FINISHED');
    const listing = await c.req('GET', `/rest/1.1/jobs/${job.id}/session/`);
    assert.ok(([] as string[]).concat(listing.json().file).includes('out.txt'));
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${job.id}/session/out.txt`)).text, 'from pyarcrest\n');
    const delegs = await c.req('POST', '/rest/1.1/jobs?action=delegations', one, {
      'content-type': 'application/json',
    });
    assert.deepEqual(([] as string[]).concat(delegs.json().job[0].delegation_id), [did]);
    const renew = await c.req('POST', `/rest/1.1/delegations/${did}?action=renew`, undefined, {
      'x-token-delegation': `Bearer ${await issue('pyarcrest', ALL)}`,
    });
    assert.equal(renew.status, 200);
    const second = await c.req('POST', `/rest/1.1/jobs?action=new&delegation_id=${did}`, adl, {
      'content-type': 'application/xml',
    });
    const other = JSON.stringify({ job: { id: second.json().job[0].id } });
    const kill = await c.req('POST', '/rest/1.1/jobs?action=kill', other, { 'content-type': 'application/json' });
    assert.equal(kill.json().job[0]['status-code'], '202');
    const clean = await c.req('POST', '/rest/1.1/jobs?action=clean', one, { 'content-type': 'application/json' });
    assert.equal(clean.json().job[0]['status-code'], '202');
  });

  it('no token ever appears in the service log, not even one sent in the query string', async () => {
    const t = await issue('query', 'compute.read');
    const r = await raw(undefined, 'GET', `/rest/1.1/jobs?access_token=${t}&state=FINISHED`);
    assert.equal(r.status, 401, 'query-string tokens are not accepted');
    await until(() => ceres.output().includes('access_token=[redacted]'), 'the request line', 10_000);
    const log = ceres.output();
    assert.ok(log.includes('"msg":"request"'), 'request lines are logged at this level');
    for (const t of used) {
      assert.ok(!log.includes(t), 'a token was logged');
      const signature = t.split('.')[2] ?? '';
      if (signature.length >= 16) assert.ok(!log.includes(signature), 'a token signature was logged');
    }
  });
});
