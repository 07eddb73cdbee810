/**
 * A small TLS world for the harness tests: two CAs (the server trusts only the first),
 * a host certificate for 127.0.0.1 from each, users from each, a proxy file, and
 * fake HTTPS services that behave like an ARC REST endpoint or like things that are
 * not one. Everything on loopback, port 0.
 */
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { x509 } from '../../src/pki/x509-lib.js';
import { makeCa, makeProxy, makeUser, proxyFileText, tempDir, type TestCred } from '../helpers/pki.js';

export interface TlsWorld {
  readonly dir: string;
  readonly ca: TestCred;
  readonly host: TestCred;
  readonly otherHost: TestCred;
  /** PEM files */
  readonly caFile: string;
  readonly userCert: string;
  readonly userKey: string;
  readonly otherUserCert: string;
  readonly otherUserKey: string;
  readonly proxyFile: string;
}

async function hostCert(ca: TestCred): Promise<TestCred> {
  return makeUser(ca, {
    dn: '/DC=org/DC=ceres-test/CN=localhost',
    eku: [x509.ExtendedKeyUsage.serverAuth],
    extra: [
      new x509.SubjectAlternativeNameExtension(
        [
          { type: 'ip', value: '127.0.0.1' },
          { type: 'dns', value: 'localhost' },
        ],
        false,
      ),
    ],
  });
}

export async function tlsWorld(register: (fn: () => void) => void): Promise<TlsWorld> {
  const dir = tempDir(register, 'ceres-bench-test-');
  const ca = await makeCa();
  const other = await makeCa({ dn: '/DC=org/DC=elsewhere/CN=Other CA' });
  const host = await hostCert(ca);
  const otherHost = await hostCert(other);
  const user = await makeUser(ca);
  const otherUser = await makeUser(other, { dn: '/DC=org/DC=elsewhere/CN=Stranger' });
  const proxy = await makeProxy(user);
  const w = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text, { mode: 0o600 });
    return p;
  };
  return {
    dir,
    ca,
    host,
    otherHost,
    caFile: w('ca.pem', ca.pem),
    userCert: w('user.pem', user.pem),
    userKey: w('userkey.pem', user.keyPem),
    otherUserCert: w('other.pem', otherUser.pem),
    otherUserKey: w('otherkey.pem', otherUser.keyPem),
    proxyFile: w('proxy.pem', proxyFileText(proxy, user)),
  };
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** An ARC-like service: versions at /arex/rest, an empty status answer for the jobs path. */
export function arcHandler(versions: string): Handler {
  return (req, res) => {
    if (req.method === 'GET' && req.url === '/arex/rest') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(versions);
    } else if (req.method === 'POST' && /^\/arex\/rest\/1\.[01]\/jobs\?action=status$/.test(req.url ?? '')) {
      res.writeHead(201, { 'content-type': 'application/json' }).end('');
    } else {
      res.writeHead(404, 'Not Found').end();
    }
  };
}

export interface FakeServer {
  readonly url: string;
  readonly server: Server | ReturnType<typeof createHttpServer>;
  /** Peer chains (subjects, leaf first) seen on TLS connections. */
  readonly peers: string[][];
}

function listen<
  S extends {
    listen: (port: number, host: string, cb: () => void) => unknown;
    address: () => AddressInfo | string | null;
    close: () => unknown;
  },
>(s: S, register: (fn: () => void) => void, scheme: string): Promise<string> {
  return new Promise((resolve) => {
    s.listen(0, '127.0.0.1', () => {
      register(() => {
        s.close();
        (s as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      resolve(`${scheme}://127.0.0.1:${(s.address() as AddressInfo).port}/arex`);
    });
  });
}

export async function fakeHttps(
  world: TlsWorld,
  register: (fn: () => void) => void,
  handler: Handler,
  o: { host?: TestCred; verifyClient?: boolean } = {},
): Promise<FakeServer> {
  const host = o.host ?? world.host;
  const peers: string[][] = [];
  const server = createHttpsServer(
    {
      cert: host.pem,
      key: host.keyPem,
      ca: [world.ca.pem],
      requestCert: true,
      rejectUnauthorized: o.verifyClient ?? true,
    },
    (req, res) => {
      const chain: string[] = [];
      let c = (req.socket as TLSSocket).getPeerCertificate(true);
      for (let i = 0; c && c.subject && i < 5; i++) {
        chain.push(String(c.subject.CN));
        if (c.issuerCertificate === c) break;
        c = c.issuerCertificate;
      }
      peers.push(chain);
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => handler(req, res, body));
    },
  );
  return { url: await listen(server, register, 'https'), server, peers };
}

export async function fakeHttp(register: (fn: () => void) => void): Promise<string> {
  const server = createHttpServer((_req, res) => res.writeHead(200).end('plain'));
  const url = await listen(server, register, 'http');
  return url.replace(/^http:/, 'https:');
}
