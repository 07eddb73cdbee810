/**
 * CRLs of the CA directory, over real TLS: a node:https server built with
 * tlsServerOptions + attachPeerIdentity on a trust store loaded from a CA directory
 * that holds a root CA, an intermediate CA and their CRLs (`<hash>.r0`, DER or PEM),
 * made with @peculiar/x509 and with `openssl ca -gencrl`. The CRLs are rewritten while
 * the server runs, in place and by rename, as fetch-crl does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { attachPeerIdentity, peerIdentity, tlsServerOptions, type AuthLog } from '../../src/http/tls-options.js';
import { caDirEntry } from '../../src/pki/ca-dir.js';
import { toPem } from '../../src/pki/certificate.js';
import { initDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { loadTrustStore } from '../../src/pki/trust-store.js';
import { hoursAgo, makeCa, makeCrl, makeProxy, makeUser, newKeys, tempDir, type TestCred } from '../helpers/pki.js';

const run = promisify(execFile);

interface Answer {
  status: number;
  body: { ok: boolean; dn?: string; code?: string; reason?: string };
}

const logLines: Array<{ msg: string; obj: object }> = [];
const log: AuthLog & { warn(obj: object, msg: string): void } = {
  debug: () => undefined,
  info: (obj, msg) => logLines.push({ obj, msg }),
  warn: (obj, msg) => logLines.push({ obj, msg }),
  error: (obj, msg) => logLines.push({ obj, msg }),
};

const dir = tempDir(after, 'ceres-crl-');
const caDir = join(dir, 'certificates');
let pki: DevPki;
let root: TestCred;
let inter: TestCred;
let alice: TestCred; // under root, revoked from the start
let bob: TestCred; // under root
let carol: TestCred; // under the intermediate
let server: https.Server;
let port: number;

const crlPath = (ca: TestCred) => join(caDir, caDirEntry(ca.der).crlFile);
/** Replace a CRL in place (same inode), as a plain rewrite does. */
const rewrite = (ca: TestCred, der: Buffer) => writeFileSync(crlPath(ca), der);
/** Replace a CRL by rename, as fetch-crl does. */
const replace = (ca: TestCred, der: Buffer) => {
  const tmp = `${crlPath(ca)}.tmp-new`;
  writeFileSync(tmp, toPem(der, 'X509 CRL'));
  renameSync(tmp, crlPath(ca));
};

function call(...chain: TestCred[]): Promise<Answer> {
  return callWith(false, ...chain);
}

/** `agent`: a keep-alive agent whose one connection is reused across calls. */
function callWith(agent: https.Agent | false, ...chain: TestCred[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        ca: readFileSync(pki.files.caCert, 'utf8'),
        servername: 'localhost',
        cert: chain.map((c) => c.pem).join(''),
        key: (chain[0] as TestCred).keyPem,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Call until the answer has `status` (the CA directory is looked at again on each handshake here). */
async function until(status: number, ...chain: TestCred[]): Promise<Answer> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const a = await call(...chain);
    if (a.status === status || Date.now() > deadline) return a;
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  pki = await initDevPki(join(dir, 'pki'));
  root = await makeCa({ dn: '/DC=org/DC=ceres-crl/CN=Root CA' });
  inter = await makeCa({ dn: '/DC=org/DC=ceres-crl/CN=Intermediate CA', issuer: root });
  alice = await makeUser(root, { dn: '/DC=org/DC=ceres-crl/CN=Alice' });
  bob = await makeUser(root, { dn: '/DC=org/DC=ceres-crl/CN=Bob' });
  carol = await makeUser(inter, { dn: '/DC=org/DC=ceres-crl/CN=Carol' });
  mkdirSync(caDir, { recursive: true });
  for (const ca of [root, inter]) {
    const e = caDirEntry(ca.der);
    writeFileSync(join(caDir, e.certFile), e.certPem);
    writeFileSync(join(caDir, e.signingPolicyFile), e.signingPolicy);
  }
  rewrite(root, await makeCrl(root, [alice])); // DER
  replace(inter, await makeCrl(inter, [])); // PEM
  // Looked at on every handshake, so a test need not wait for the default interval.
  const trust = loadTrustStore(caDir, { crlRecheckMs: 0, log });
  assert.deepEqual(trust.problems, []);
  const host = {
    certPem: readFileSync(pki.files.hostCert, 'utf8'),
    keyPem: readFileSync(pki.files.hostKey, 'utf8'),
    caPems: trust.pems,
  };
  server = https.createServer(tlsServerOptions(host), (req, res) => {
    const r = peerIdentity(req.socket as TLSSocket);
    res.writeHead(r.ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(r.ok ? { ok: true, dn: r.identity.dn } : { ok: false, code: r.code, reason: r.reason }));
  });
  attachPeerIdentity(server, trust, { log });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
});

describe('CRLs over TLS', () => {
  it('users their CA has not revoked are accepted, directly and through an intermediate CA', async () => {
    for (const [cred, dn] of [
      [bob, '/DC=org/DC=ceres-crl/CN=Bob'],
      [carol, '/DC=org/DC=ceres-crl/CN=Carol'],
    ] as const) {
      const a = await call(cred);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.dn, dn);
    }
    assert.equal((await call(await makeProxy(bob), bob)).status, 200);
  });

  it('a revoked user is refused with the reason, and so is every proxy of theirs', async () => {
    for (const chain of [
      [alice],
      [await makeProxy(alice), alice],
      [await makeProxy(alice, { legacy: 'proxy' }), alice, root],
    ]) {
      const a = await call(...chain);
      assert.equal(a.status, 401, JSON.stringify(a.body));
      assert.equal(a.body.code, 'CE_ERR_AUTH_CERT_INVALID');
      assert.match(a.body.reason ?? '', /CN=Alice was revoked by its CA \/DC=org\/DC=ceres-crl\/CN=Root CA on \d{4}-/);
    }
  });

  it('a revocation is picked up while the service runs (in place and by rename), and the chain cache does not outlive it', async () => {
    assert.equal((await call(bob)).status, 200);
    assert.equal((await call(bob)).status, 200, 'verified once, then from the cache');
    rewrite(root, await makeCrl(root, [alice, bob]));
    const refused = await until(401, bob);
    assert.equal(refused.status, 401, 'the cached verification of bob was dropped with the reload');
    assert.match(refused.body.reason ?? '', /CN=Bob was revoked/);
    replace(root, await makeCrl(root, [alice]));
    assert.equal((await until(200, bob)).status, 200, 'lifted by a CRL renamed into place');
    assert.equal((await call(alice)).status, 401);
    assert.ok(logLines.some((l) => l.msg === 'CRLs loaded'));
  });

  it('a revocation also ends a kept-alive connection verified before it, from its next request', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    let last: unknown;
    const onRequest = (req: IncomingMessage) => (last = req.socket);
    server.on('request', onRequest);
    try {
      const first = await callWith(agent, bob);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const kept = last;
      rewrite(root, await makeCrl(root, [alice, bob]));
      // Wait until a fresh connection sees the reload, then ask on the old one.
      assert.equal((await until(401, bob)).status, 401);
      const again = await callWith(agent, bob);
      assert.equal(last, kept, 'both requests arrived on the same kept-alive connection');
      assert.equal(again.status, 401, `the kept-alive connection is refused: ${JSON.stringify(again.body)}`);
      assert.match(again.body.reason ?? '', /CN=Bob was revoked/);
    } finally {
      server.off('request', onRequest);
      agent.destroy();
      replace(root, await makeCrl(root, [alice]));
      assert.equal((await until(200, bob)).status, 200);
    }
  });

  it('a revoked intermediate CA: every user under it is refused, whether the client sends the CA or not', async () => {
    replace(root, await makeCrl(root, [alice, inter]));
    const a = await until(401, carol);
    assert.equal(a.status, 401);
    assert.match(a.body.reason ?? '', /CN=Intermediate CA was revoked by its CA \/DC=org\/DC=ceres-crl\/CN=Root CA/);
    assert.equal((await call(carol, inter)).status, 401);
    assert.equal((await call(bob)).status, 200, 'users of the root itself are not affected');
    replace(root, await makeCrl(root, [alice]));
    assert.equal((await until(200, carol)).status, 200);
  });

  it('an expired CRL refuses the users of its CA with the reason; a fresh one lets them in again', async () => {
    replace(inter, await makeCrl(inter, [], { thisUpdate: hoursAgo(48), nextUpdate: hoursAgo(1) }));
    const a = await until(401, carol);
    assert.equal(a.status, 401);
    assert.match(
      a.body.reason ?? '',
      /revocation list of the CA \/DC=org\/DC=ceres-crl\/CN=Intermediate CA expired at .*CRLs are not being updated/,
    );
    assert.equal((await call(bob)).status, 200, 'other CAs are not affected');
    replace(inter, await makeCrl(inter, []));
    assert.equal((await until(200, carol)).status, 200);
  });

  it("a CRL that does not verify with its CA's key does not apply; a broken rewrite keeps the previous CRL in force", async () => {
    rewrite(root, await makeCrl(root, [bob], { signWith: (await newKeys()).privateKey }));
    // No revocation applies: bob passes (the forged list is ignored), alice too (the real one is gone).
    assert.equal((await until(200, alice)).status, 200);
    assert.equal((await call(bob)).status, 200);
    rewrite(root, await makeCrl(root, [alice]));
    assert.equal((await until(401, alice)).status, 401);
    // Half-written file (fetch-crl interrupted): the previous CRL stays, alice stays refused.
    const good = readFileSync(crlPath(root));
    writeFileSync(crlPath(root), good.subarray(0, good.length >> 1));
    for (let i = 0; i < 3; i++) assert.equal((await call(alice)).status, 401);
    assert.ok(logLines.some((l) => l.msg === 'CRL file not usable' && JSON.stringify(l.obj).includes('"kept":true')));
    rewrite(root, good);
  });

  it('a CRL made by openssl ca -gencrl, as PEM and as DER, is honoured', async (t) => {
    const have = await run('openssl', ['version']).then(
      () => true,
      () => false,
    );
    if (!have) return t.skip('openssl is not installed');
    const work = join(dir, 'openssl-ca');
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'ca.pem'), inter.pem);
    writeFileSync(join(work, 'ca.key'), inter.keyPem);
    // index.txt line of a revoked certificate: R, expiry, revocation time, serial, file, subject.
    const serial = carol.cert.serialHex.toUpperCase();
    writeFileSync(
      join(work, 'index.txt'),
      `R\t491231235959Z\t250101000000Z\t${serial.length % 2 === 1 ? `0${serial}` : serial}\tunknown\t/DC=org/DC=ceres-crl/CN=Carol\n`,
    );
    writeFileSync(join(work, 'crlnumber'), '01\n');
    writeFileSync(
      join(work, 'ca.cnf'),
      [
        '[ca]',
        'default_ca = d',
        '[d]',
        `database = ${join(work, 'index.txt')}`,
        `crlnumber = ${join(work, 'crlnumber')}`,
        'default_md = sha256',
        'default_crl_days = 2',
        '',
      ].join('\n'),
    );
    await run('openssl', [
      'ca',
      '-gencrl',
      '-batch',
      '-config',
      join(work, 'ca.cnf'),
      '-keyfile',
      join(work, 'ca.key'),
      '-cert',
      join(work, 'ca.pem'),
      '-out',
      join(work, 'crl.pem'),
    ]);
    await run('openssl', ['crl', '-in', join(work, 'crl.pem'), '-outform', 'DER', '-out', join(work, 'crl.der')]);
    for (const file of ['crl.pem', 'crl.der']) {
      replace(inter, await makeCrl(inter, []));
      assert.equal((await until(200, carol)).status, 200, file);
      writeFileSync(`${crlPath(inter)}.tmp`, readFileSync(join(work, file)));
      renameSync(`${crlPath(inter)}.tmp`, crlPath(inter));
      const a = await until(401, carol);
      assert.equal(a.status, 401, `${file}: ${JSON.stringify(a.body)}`);
      assert.match(a.body.reason ?? '', /CN=Carol was revoked by its CA \/DC=org\/DC=ceres-crl\/CN=Intermediate CA/);
    }
    replace(inter, await makeCrl(inter, []));
    assert.equal((await until(200, carol)).status, 200);
  });
});
