/**
 * Authentication over real TLS: a node:https server built with tlsServerOptions +
 * attachPeerIdentity, clients presenting every kind of credential (dev PKI user
 * certificate and arcproxy-style proxy file, curl, refused credentials made here).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { attachPeerIdentity, peerIdentity, tlsServerOptions, type AuthLog } from '../../src/http/tls-options.js';
import { LegacyChainBudget, readPeerChain } from '../../src/http/peer-chain.js';
import { VerifiedChainCache } from '../../src/auth/chain-cache.js';
import { addDevUser, initDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { loadTrustStore, trustStoreFromPems, type TrustStore } from '../../src/pki/trust-store.js';
import {
  hoursAgo,
  hoursFromNow,
  makeCa,
  makeProxy,
  makeUser,
  newKeys,
  proxyFileText,
  tempDir,
  type TestCred,
} from '../helpers/pki.js';

interface Answer {
  status: number;
  body: {
    ok: boolean;
    code?: string;
    reason?: string;
    dn?: string;
    isProxy?: boolean;
    proxyDepth?: number;
    chainLength: number;
    reused: boolean;
  };
  session: Buffer | undefined;
  reusedByClient: boolean;
}

interface Server {
  port: number;
  close(): Promise<void>;
}

const logLines: Array<{ level: string; obj: object; msg: string }> = [];
const log: AuthLog = {
  debug: (obj, msg) => logLines.push({ level: 'debug', obj, msg }),
  info: (obj, msg) => logLines.push({ level: 'info', obj, msg }),
  error: (obj, msg) => logLines.push({ level: 'error', obj, msg }),
};

async function startServer(
  pki: DevPki,
  trust: TrustStore,
  opts: {
    plain?: boolean;
    cache?: VerifiedChainCache;
    onSecure?: (s: TLSSocket) => void;
    legacyChainBudget?: LegacyChainBudget;
  } = {},
): Promise<Server> {
  const host = {
    certPem: readFileSync(pki.files.hostCert, 'utf8'),
    keyPem: readFileSync(pki.files.hostKey, 'utf8'),
    caPems: trust.pems,
  };
  // `plain`: what a naive server does (resumption on) — the control for the resumption test.
  const options =
    opts.plain === true
      ? { cert: host.certPem, key: host.keyPem, ca: [...host.caPems], requestCert: true, rejectUnauthorized: false }
      : tlsServerOptions(host);
  const server = https.createServer(options, (req, res) => {
    const socket = req.socket as TLSSocket;
    const skew = req.url === '/in-eight-days' ? 8 * 24 * 3600 * 1000 : 0;
    const r = opts.plain === true ? undefined : peerIdentity(socket, Date.now() + skew);
    const body = {
      ...(r === undefined
        ? { ok: false }
        : r.ok
          ? { ok: true, dn: r.identity.dn, isProxy: r.identity.isProxy, proxyDepth: r.identity.proxyDepth }
          : { ok: false, code: r.code, reason: r.reason }),
      chainLength: readPeerChain(socket).ders.length,
      reused: socket.isSessionReused(),
    };
    res.writeHead(r?.ok === true ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  if (opts.plain !== true)
    attachPeerIdentity(server, trust, {
      log,
      ...(opts.cache === undefined ? {} : { cache: opts.cache }),
      ...(opts.legacyChainBudget === undefined ? {} : { legacyChainBudget: opts.legacyChainBudget }),
    });
  if (opts.onSecure !== undefined) server.prependListener('secureConnection', opts.onSecure);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface ClientCred {
  cert?: string;
  key?: string;
}

function call(
  port: number,
  ca: string,
  cred: ClientCred,
  o: {
    session?: Buffer;
    agent?: https.Agent;
    path?: string;
    servername?: string;
    maxVersion?: 'TLSv1.2' | 'TLSv1.3';
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: o.path ?? '/',
        ca,
        ...(o.servername === undefined
          ? { servername: 'localhost' }
          : o.servername === ''
            ? {}
            : { servername: o.servername }),
        ...(cred.cert === undefined ? {} : { cert: cred.cert }),
        ...(cred.key === undefined ? {} : { key: cred.key }),
        ...(o.session === undefined ? {} : { session: o.session }),
        ...(o.maxVersion === undefined ? {} : { maxVersion: o.maxVersion }),
        agent: o.agent ?? false,
      },
      (res) => {
        // Read now: a kept-alive socket is detached from the response at its end.
        const socket = res.socket as TLSSocket;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
            session: session ?? socket.getSession(),
            reusedByClient: socket.isSessionReused(),
          });
        });
      },
    );
    req.on('socket', (s) => s.on('session', (sess: Buffer) => (session = sess)));
    req.on('error', reject);
    req.end();
  });
}

const run = promisify(execFile);
let curlAvailable = false;

let pki: DevPki;
let caPem: string;
let trust: TrustStore;
let server: Server;
let testCa: TestCred;
let testUser: TestCred;
const files = (cert: string, key: string): ClientCred => ({
  cert: readFileSync(cert, 'utf8'),
  key: readFileSync(key, 'utf8'),
});
const credOf = (leaf: TestCred, ...rest: TestCred[]): ClientCred => ({
  cert: [leaf, ...rest].map((c) => c.pem).join(''),
  key: leaf.keyPem,
});

const dir = tempDir(after, 'ceres-tls-');
before(async () => {
  pki = await initDevPki(`${dir}/pki`);
  caPem = readFileSync(pki.files.caCert, 'utf8');
  testCa = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Second Test CA' });
  testUser = await makeUser(testCa, { dn: '/DC=org/DC=ceres-test/CN=Second User' });
  // The dev CA from its hashed directory, plus a second CA for hand-made credentials.
  trust = trustStoreFromPems([...loadTrustStore(pki.files.certificatesDir).pems, testCa.pem]);
  server = await startServer(pki, trust);
  curlAvailable = await run('curl', ['--version']).then(
    () => true,
    () => false,
  );
});
after(async () => {
  await server?.close();
});

describe('TLS listener options', () => {
  it('request a certificate without rejecting, TLS 1.2 minimum, no tickets or session cache, no renegotiation', () => {
    const o = tlsServerOptions({ certPem: 'c', keyPem: 'k', caPems: ['a', 'b'] });
    assert.equal(o.requestCert, true);
    assert.equal(o.rejectUnauthorized, false);
    assert.equal(o.minVersion, 'TLSv1.2');
    assert.equal(o.sessionTimeout, 0);
    assert.deepEqual(o.ca, ['a', 'b']);
    const NO_TICKET = 0x4000;
    const NO_RENEGOTIATION = 0x40000000;
    assert.equal((o.secureOptions ?? 0) & NO_TICKET, NO_TICKET);
    assert.equal((o.secureOptions ?? 0) & NO_RENEGOTIATION, NO_RENEGOTIATION);
  });
});

describe('accepted over TLS', () => {
  it('the dev PKI user certificate', async () => {
    const a = await call(server.port, caPem, files(pki.files.userCert, pki.files.userKey));
    assert.equal(a.status, 200);
    assert.equal(a.body.dn, pki.userDn);
    assert.equal(a.body.isProxy, false);
  });

  it('the dev PKI proxy file as both cert and key (as curl and arcproxy users do)', async () => {
    const text = readFileSync(pki.files.userProxy, 'utf8');
    const a = await call(server.port, caPem, { cert: text, key: text });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.dn, pki.userDn);
    assert.equal(a.body.isProxy, true);
    assert.equal(a.body.proxyDepth, 1);
  });

  it('a user added with addDevUser, by proxy', async () => {
    const u = await addDevUser(pki.dir, 'alice');
    const text = readFileSync(u.proxyFile, 'utf8');
    const a = await call(server.port, caPem, { cert: text, key: text });
    assert.equal(a.status, 200);
    assert.equal(a.body.dn, u.dn);
  });

  it('a proxy of a proxy from another trusted CA, over TLS 1.2 as well', async () => {
    const p1 = await makeProxy(testUser);
    const p2 = await makeProxy(p1, { policy: 'limited' });
    for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
      const a = await call(
        server.port,
        caPem,
        { cert: proxyFileText(p2, p1, testUser), key: p2.keyPem },
        { maxVersion },
      );
      assert.equal(a.status, 200, `${maxVersion}: ${JSON.stringify(a.body)}`);
      assert.equal(a.body.dn, '/DC=org/DC=ceres-test/CN=Second User');
      assert.equal(a.body.proxyDepth, 2);
    }
  });

  it('legacy (GT2) proxies and a GT2 limited proxy of one, over TLS 1.2 and 1.3, with or without the CA', async () => {
    const gt2 = await makeProxy(testUser, { legacy: 'proxy' });
    const limited = await makeProxy(gt2, { legacy: 'limited proxy' });
    for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
      const cases: Array<[TestCred[], number]> = [
        [[gt2, testUser], 1],
        [[gt2, testUser, testCa], 1],
        [[limited, gt2, testUser], 2],
      ];
      for (const [chain, depth] of cases) {
        const a = await call(server.port, caPem, credOf(chain[0] as TestCred, ...chain.slice(1)), { maxVersion });
        assert.equal(a.status, 200, `${maxVersion}: ${JSON.stringify(a.body)}`);
        assert.equal(a.body.dn, '/DC=org/DC=ceres-test/CN=Second User');
        assert.equal(a.body.isProxy, true);
        assert.equal(a.body.proxyDepth, depth);
        assert.equal(a.body.chainLength, chain.length, 'the chain as sent, nothing dropped or added');
      }
    }
  });

  it('the host certificate is valid for localhost and for 127.0.0.1', async () => {
    const cred = files(pki.files.userCert, pki.files.userKey);
    assert.equal((await call(server.port, caPem, cred, { servername: 'localhost' })).status, 200);
    assert.equal((await call(server.port, caPem, cred, { servername: '' })).status, 200);
  });
});

describe('refused over TLS (the handshake succeeds, the identity is refused)', () => {
  const expectRefusal = async (cred: ClientCred, code: string, reason: RegExp): Promise<void> => {
    const a = await call(server.port, caPem, cred);
    assert.equal(a.status, 401, JSON.stringify(a.body));
    assert.equal(a.body.code, code);
    assert.match(a.body.reason ?? '', reason);
  };

  it('no certificate', async () => {
    await expectRefusal({}, 'CE_ERR_AUTH_NO_CREDENTIALS', /no client certificate/);
  });

  it('an expired certificate', async () => {
    const u = await makeUser(testCa, { notBefore: hoursAgo(30), notAfter: hoursAgo(2) });
    await expectRefusal(credOf(u), 'CE_ERR_AUTH_CERT_INVALID', /expired at/);
  });

  it('a not yet valid certificate', async () => {
    const u = await makeUser(testCa, { notBefore: hoursFromNow(3), notAfter: hoursFromNow(30) });
    await expectRefusal(credOf(u), 'CE_ERR_AUTH_CERT_INVALID', /not valid before/);
  });

  it('an expired proxy', async () => {
    const p = await makeProxy(testUser, { notBefore: hoursAgo(20), notAfter: hoursAgo(8) });
    await expectRefusal(credOf(p, testUser), 'CE_ERR_AUTH_CERT_INVALID', /proxy certificate expired/);
  });

  it('a not yet valid proxy', async () => {
    const p = await makeProxy(testUser, { notBefore: hoursFromNow(1), notAfter: hoursFromNow(10) });
    await expectRefusal(credOf(p, testUser), 'CE_ERR_AUTH_CERT_INVALID', /proxy certificate is not valid before/);
  });

  it('an unknown CA', async () => {
    const rogue = await makeCa({ dn: '/DC=org/DC=ceres-test/CN=Rogue CA' });
    await expectRefusal(
      credOf(await makeUser(rogue)),
      'CE_ERR_AUTH_CERT_INVALID',
      /CN=Rogue CA, which is not a trusted CA/,
    );
    await expectRefusal(
      credOf(await makeUser(rogue), rogue),
      'CE_ERR_AUTH_CERT_INVALID',
      /Rogue CA, which is not trusted/,
    );
  });

  it('a broken chain: proxy without the user certificate, or without the middle proxy', async () => {
    const p1 = await makeProxy(testUser);
    const p2 = await makeProxy(p1);
    await expectRefusal(credOf(p1), 'CE_ERR_AUTH_CERT_INVALID', /issuer of the proxy certificate .* was not presented/);
    // The user certificate did not issue the last proxy, so the chain read ends at that proxy.
    await expectRefusal(
      credOf(p2, testUser),
      'CE_ERR_AUTH_CERT_INVALID',
      /issuer of the proxy certificate .*CN=Second User\/CN=\d+\) was not presented/,
    );
  });

  it("a proxy signed by a key other than its issuer's", async () => {
    const p = await makeProxy(testUser, { signWith: (await newKeys()).privateKey });
    await expectRefusal(credOf(p, testUser), 'CE_ERR_AUTH_CERT_INVALID', /not signed by the key of its issuer/);
  });

  it("a proxy whose subject does not extend its issuer's", async () => {
    const p = await makeProxy(testUser, { subject: '/DC=org/DC=ceres-test/CN=Admin/CN=4711' });
    await expectRefusal(credOf(p, testUser), 'CE_ERR_AUTH_CERT_INVALID', /does not extend its issuer's subject/);
  });

  it('a GT2 proxy without the certificate that issued it', async () => {
    await expectRefusal(
      credOf(await makeProxy(testUser, { legacy: 'proxy' })),
      'CE_ERR_AUTH_CERT_INVALID',
      /was not presented|not a trusted CA/,
    );
  });

  it('a self-signed certificate', async () => {
    const s = await makeUser(undefined, { dn: pki.userDn, selfSigned: true });
    await expectRefusal(credOf(s), 'CE_ERR_AUTH_CERT_INVALID', /self-signed/);
  });

  it('logs refusals with the reason and never certificate material', () => {
    const refusals = logLines.filter((l) => l.msg === 'client certificate refused');
    assert.ok(refusals.length >= 8);
    for (const l of logLines) assert.doesNotMatch(JSON.stringify(l.obj), /BEGIN|PRIVATE/);
  });
});

describe('connections', () => {
  it('a second connection offering the previous session still presents the full chain', async () => {
    const p = await makeProxy(testUser);
    const cred = credOf(p, testUser);
    // Control: a server with default session handling resumes and then reports less.
    const plain = await startServer(pki, trust, { plain: true });
    try {
      for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
        const first = await call(plain.port, caPem, cred, { maxVersion });
        assert.ok(first.session !== undefined);
        const second = await call(plain.port, caPem, cred, { maxVersion, session: first.session });
        assert.equal(second.body.reused, true, `${maxVersion}: the control server resumes`);
        assert.ok(
          second.body.chainLength < first.body.chainLength,
          `${maxVersion}: a resumed session hides the chain (${second.body.chainLength} vs ${first.body.chainLength})`,
        );
      }
    } finally {
      await plain.close();
    }
    for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
      const first = await call(server.port, caPem, cred, { maxVersion });
      const second = await call(server.port, caPem, cred, {
        maxVersion,
        ...(first.session === undefined ? {} : { session: first.session }),
      });
      assert.equal(second.body.reused, false, maxVersion);
      assert.equal(second.reusedByClient, false, maxVersion);
      assert.equal(second.body.chainLength, first.body.chainLength, maxVersion);
      assert.equal(second.status, 200, JSON.stringify(second.body));
      assert.equal(second.body.proxyDepth, 1);
    }
  });

  it('reads the peer chain once per connection however many requests it carries', async () => {
    let reads = 0;
    const counting = await startServer(pki, trust, {
      onSecure: (s) => {
        const orig = s.getPeerCertificate.bind(s);
        s.getPeerCertificate = ((detailed?: boolean) => {
          reads++;
          return orig(detailed);
        }) as typeof s.getPeerCertificate;
      },
    });
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const cred = files(pki.files.userCert, pki.files.userKey);
      for (let i = 0; i < 4; i++) assert.equal((await call(counting.port, caPem, cred, { agent })).status, 200);
      // attachPeerIdentity reads it when the handshake completes; the test handler's four
      // readPeerChain calls get the chain kept on the socket.
      assert.equal(reads, 1);
    } finally {
      agent.destroy();
      await counting.close();
    }
  });

  it('shares verified chains between connections of the same client', async () => {
    const cache = new VerifiedChainCache(8);
    const cached = await startServer(pki, trust, { cache });
    try {
      const text = readFileSync(pki.files.userProxy, 'utf8');
      for (let i = 0; i < 3; i++) assert.equal((await call(cached.port, caPem, { cert: text, key: text })).status, 200);
      assert.equal(cache.size, 1);
      await call(cached.port, caPem, files(pki.files.userCert, pki.files.userKey));
      assert.equal(cache.size, 2);
    } finally {
      await cached.close();
    }
  });

  it("stops accepting a connection's credentials once they expire", async () => {
    const text = readFileSync(pki.files.userProxy, 'utf8');
    const a = await call(server.port, caPem, { cert: text, key: text }, { path: '/in-eight-days' });
    assert.equal(a.status, 401);
    assert.match(a.body.reason ?? '', /credentials expired at/);
  });
});

describe('reading the presented chain (Node leaks what getPeerX509Certificate reads)', () => {
  /** A server that counts the calls of the leaky read, with its own GT2 budget. */
  const counting = async (budget?: LegacyChainBudget): Promise<Server & { leakyReads: () => number }> => {
    let n = 0;
    const s = await startServer(pki, trust, {
      ...(budget === undefined ? {} : { legacyChainBudget: budget }),
      onSecure: (sock) => {
        const orig = sock.getPeerX509Certificate.bind(sock);
        sock.getPeerX509Certificate = () => {
          n++;
          return orig();
        };
      },
    });
    return { ...s, leakyReads: () => n };
  };

  it('a certificate, an RFC 3820 proxy and a proxy of one are read without the leaky call', async () => {
    const srv = await counting();
    try {
      const p = await makeProxy(testUser);
      const pp = await makeProxy(p);
      const cases: Array<[ClientCred, number]> = [
        [files(pki.files.userCert, pki.files.userKey), 1],
        [credOf(p, testUser), 2],
        [credOf(p, testUser, testCa), 2],
        [credOf(pp, p, testUser), 3],
      ];
      for (const [cred, length] of cases) {
        const a = await call(srv.port, caPem, cred);
        assert.equal(a.status, 200, JSON.stringify(a.body));
        assert.equal(a.body.chainLength, length, 'the trusted CA is not part of the chain read');
      }
      assert.equal(srv.leakyReads(), 0);
    } finally {
      await srv.close();
    }
  });

  it('a chain sent out of order is read in issuer order, without the extra certificates', async () => {
    const srv = await counting();
    try {
      const p = await makeProxy(testUser);
      const stranger = await makeUser(testCa, { dn: '/DC=org/DC=ceres-test/CN=Stranger' });
      const a = await call(srv.port, caPem, credOf(p, testCa, stranger, testUser));
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(a.body.dn, '/DC=org/DC=ceres-test/CN=Second User');
      assert.equal(a.body.chainLength, 2);
      assert.equal(srv.leakyReads(), 0);
    } finally {
      await srv.close();
    }
  });

  it('a GT2 chain is read as sent, once per connection, and charged to the budget', async () => {
    const gt2 = await makeProxy(testUser, { legacy: 'proxy' });
    const limited = await makeProxy(gt2, { legacy: 'limited proxy' });
    // Room for exactly three certificates after the leaf.
    const budget = new LegacyChainBudget(3 * LegacyChainBudget.BYTES_PER_CERTIFICATE);
    const srv = await counting(budget);
    const logged = logLines.length;
    try {
      const a = await call(srv.port, caPem, credOf(gt2, testUser));
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(srv.leakyReads(), 1);
      assert.equal(budget.spent, false);
      const b = await call(srv.port, caPem, credOf(limited, gt2, testUser));
      assert.equal(b.status, 200, JSON.stringify(b.body));
      assert.equal(b.body.proxyDepth, 2);
      assert.equal(srv.leakyReads(), 2);
      assert.equal(budget.spent, true);
      // Spent: GT2 is refused with a reason that says so, and read no more...
      for (let i = 0; i < 2; i++) {
        const c = await call(srv.port, caPem, credOf(gt2, testUser));
        assert.equal(c.status, 401);
        assert.equal(c.body.code, 'CE_ERR_AUTH_CERT_INVALID');
        assert.match(c.body.reason ?? '', /legacy \(GT2\) proxies are not accepted.*RFC 3820/);
      }
      assert.equal(srv.leakyReads(), 2);
      // ...said once in the log...
      const spent = logLines.slice(logged).filter((l) => /budget for it is spent/.test(l.msg));
      assert.equal(spent.length, 1);
      assert.equal(spent[0]?.level, 'error');
      // ...and everything else still works.
      const p = await makeProxy(testUser);
      assert.equal((await call(srv.port, caPem, credOf(p, testUser))).status, 200);
      assert.equal((await call(srv.port, caPem, files(pki.files.userCert, pki.files.userKey))).status, 200);
    } finally {
      await srv.close();
    }
  });

  it('readPeerChain without a budget never makes the leaky read, and says so for a GT2 chain', async () => {
    const gt2 = await makeProxy(testUser, { legacy: 'proxy' });
    let reads = 0;
    let seen: ReturnType<typeof readPeerChain> | undefined;
    const server = https.createServer(
      tlsServerOptions({
        certPem: readFileSync(pki.files.hostCert, 'utf8'),
        keyPem: readFileSync(pki.files.hostKey, 'utf8'),
        caPems: trust.pems,
      }),
      (req, res) => {
        const sock = req.socket as TLSSocket;
        const orig = sock.getPeerX509Certificate.bind(sock);
        sock.getPeerX509Certificate = () => {
          reads++;
          return orig();
        };
        seen = readPeerChain(sock);
        res.end('{}');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await call((server.address() as AddressInfo).port, caPem, credOf(gt2, testUser));
      assert.equal(reads, 0);
      assert.equal(seen?.legacyUnread, true);
      assert.equal(seen?.ders.length, 1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('curl', () => {
  const curl = async (...args: string[]): Promise<{ status: number; body: Answer['body'] }> => {
    const { stdout } = await run('curl', [
      '-s',
      '-w',
      '\n%{http_code}',
      '--cacert',
      pki.files.caCert,
      ...args,
      `https://localhost:${server.port}/`,
    ]);
    const i = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(i + 1)), body: JSON.parse(stdout.slice(0, i)) as Answer['body'] };
  };

  it('curl --cert userproxy.pem --key userproxy.pem is accepted with the user DN', async (t) => {
    if (!curlAvailable) return t.skip('curl is not installed');
    for (const v of [[], ['--tls-max', '1.2']]) {
      const r = await curl('--cert', pki.files.userProxy, '--key', pki.files.userProxy, ...v);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.dn, pki.userDn);
      assert.equal(r.body.isProxy, true);
    }
  });

  it('curl without a certificate is refused', async (t) => {
    if (!curlAvailable) return t.skip('curl is not installed');
    const r = await curl();
    assert.equal(r.status, 401);
    assert.equal(r.body.code, 'CE_ERR_AUTH_NO_CREDENTIALS');
  });
});
