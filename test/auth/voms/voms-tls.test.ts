/**
 * VOMS attributes over real TLS: a node:https server built like the service's listener
 * (tlsServerOptions + attachPeerIdentity with the VOMS verifier), clients presenting
 * real voms-proxy-fake proxies; the handler answers with the identity it was given.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { VomsVerifier } from '../../../src/auth/voms/voms-verifier.js';
import { attachPeerIdentity, peerIdentity, tlsServerOptions, type AuthLog } from '../../../src/http/tls-options.js';
import { createEndEntityCertificate } from '../../../src/pki/issue.js';
import { generateRsaKeyPair, privateKeyToPem } from '../../../src/pki/keys.js';
import { toPem } from '../../../src/pki/certificate.js';
import { loadTrustStore } from '../../../src/pki/trust-store.js';
import { until } from '../../helpers/poll.js';
import { fakeProxy, vomsSkip, vomsWorld, type Cred, type Proxy, type VomsWorld } from './voms-fixture.js';

const HOST = 'voms.example.org';
const FQANS = ['/atlas/Role=NULL/Capability=NULL', '/atlas/prod/Role=production/Capability=NULL'];

interface Seen {
  status: number;
  dn?: string;
  voms?: { vo: string; fqans: string[]; serverDn: string; notAfter: string };
}

describe('VOMS attributes of a TLS connection', { skip: vomsSkip }, () => {
  let dir: string;
  let w: VomsWorld;
  let alice: Cred;
  let server: Cred;
  let proxy: Proxy;
  let caPem: string;
  let port: number;
  let httpServer: https.Server;
  let handshakes = 0;
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  const push = (level: string) => (obj: object, msg: string) =>
    lines.push({ level, obj: obj as Record<string, unknown>, msg });
  const log: AuthLog & { warn(obj: object, msg: string): void } = {
    debug: push('debug'),
    info: push('info'),
    warn: push('warn'),
    error: push('error'),
  };

  const call = (p: Proxy, o: { agent?: https.Agent; path?: string } = {}): Promise<Seen> =>
    new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          path: o.path ?? '/',
          ca: caPem,
          servername: 'localhost',
          cert: p.pem,
          key: p.pem,
          agent: o.agent ?? false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as object) }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-voms-tls-'));
    w = await vomsWorld(dir);
    [alice, server] = await Promise.all([w.user('Alice'), w.server(HOST)]);
    proxy = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server, host: HOST });
    caPem = readFileSync(w.ca.certFile, 'utf8');
    const hostKeys = await generateRsaKeyPair();
    const hostDer = await createEndEntityCertificate({
      dn: `${w.ca.dn.replace(/\/CN=[^/]*$/, '')}/CN=localhost`,
      kind: 'host',
      dnsNames: ['localhost'],
      publicKey: hostKeys.publicKey,
      issuer: { certDer: w.ca.der, key: w.ca.keys.privateKey },
    });
    const trust = loadTrustStore(w.caDir);
    httpServer = https.createServer(
      tlsServerOptions({ certPem: toPem(hostDer), keyPem: privateKeyToPem(hostKeys.privateKey), caPems: trust.pems }),
      (req, res) => {
        // `/in-90-minutes`: the identity of the same connection an hour and a half from now.
        const r = peerIdentity(req.socket as TLSSocket, Date.now() + (req.url === '/in-90-minutes' ? 90 * 60_000 : 0));
        res.writeHead(r.ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(r.ok ? { dn: r.identity.dn, voms: r.identity.voms } : { reason: r.reason }));
      },
    );
    // Looked at again every 100 ms, so the test of a directory edited while running stays short.
    attachPeerIdentity(httpServer, trust, {
      log,
      attributes: new VomsVerifier({ dir: w.vomsDir, recheckMs: 100, log }),
    });
    httpServer.on('secureConnection', () => handshakes++);
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    port = (httpServer.address() as AddressInfo).port;
  });
  after(async () => {
    httpServer.closeAllConnections();
    await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates a VOMS proxy without attributes while no LSC trusts its server, then with them once the LSC is added', async () => {
    const before = await call(proxy);
    assert.equal(before.status, 200);
    assert.equal(before.dn, alice.dn);
    assert.equal(before.voms, undefined);
    assert.ok(
      lines.some(
        (l) => l.msg === 'VOMS attributes ignored' && /no atlas\/voms\.example\.org\.lsc/.test(String(l.obj.reason)),
      ),
    );

    w.writeLsc('atlas', HOST, [server.dn, w.ca.dn]);
    let seen: Seen = before;
    await until(async () => (seen = await call(proxy)).voms !== undefined, 'the added LSC file to be picked up');
    assert.ok(seen.voms);
    assert.equal(seen.dn, alice.dn);
    assert.equal(seen.voms.vo, 'atlas');
    assert.deepEqual(seen.voms.fqans, FQANS);
    assert.equal(seen.voms.serverDn, server.dn);
    // The call that first saw the attributes may have got them from the re-check at its request
    // (the directory was looked at again between its handshake and its request), which logs
    // nothing: a connection made now has them from its handshake, which logs them.
    assert.ok((await call(proxy)).voms);
    const debug = lines.find((l) => l.msg === 'client authenticated' && Array.isArray(l.obj.fqans));
    assert.deepEqual(debug?.obj.fqans, FQANS);
    assert.equal(debug?.obj.vo, 'atlas');
  });

  it('keeps authenticating a VOMS proxy whose AC is refused (expired), without attributes', async () => {
    w.writeLsc('atlas', HOST, [server.dn, w.ca.dn]);
    const expired = await fakeProxy(w, alice, {
      vo: 'atlas',
      fqans: FQANS,
      server,
      host: HOST,
      pastac: '2:00',
      vomslife: 1,
    });
    const r = await call(expired);
    assert.equal(r.status, 200);
    assert.equal(r.dn, alice.dn);
    assert.equal(r.voms, undefined);
  });

  it('drops the attributes of a kept-alive connection when its AC expires, keeping the certificate identity', async () => {
    w.writeLsc('atlas', HOST, [server.dn, w.ca.dn]);
    const short = await fakeProxy(w, alice, { vo: 'atlas', fqans: FQANS, server, host: HOST, vomslife: 1, hours: 12 });
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.deepEqual((await call(short, { agent })).voms?.fqans, FQANS);
      const later = await call(short, { agent, path: '/in-90-minutes' });
      assert.equal(later.status, 200);
      assert.equal(later.dn, alice.dn);
      assert.equal(later.voms, undefined);
    } finally {
      agent.destroy();
    }
  });

  it('applies an LSC removed while a connection is kept alive from its next request', async () => {
    w.writeLsc('atlas', HOST, [server.dn, w.ca.dn]);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = handshakes;
      const first = await call(proxy, { agent });
      assert.deepEqual(first.voms?.fqans, FQANS);
      w.removeLsc('atlas', HOST);
      let r: Seen = first;
      await until(async () => (r = await call(proxy, { agent })).voms === undefined, 'the removed LSC to apply');
      assert.equal(r.status, 200);
      assert.equal(r.dn, alice.dn);
      assert.equal(handshakes - before, 1, 'one kept-alive connection throughout');
    } finally {
      agent.destroy();
      w.writeLsc('atlas', HOST, [server.dn, w.ca.dn]);
    }
  });
});
