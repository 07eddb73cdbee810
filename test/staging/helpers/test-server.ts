/**
 * A real HTTP(S) file server on loopback for staging tests, with fault injection and
 * a small WebDAV subset (PUT into existing collections only, MKCOL, HEAD):
 *  - resources: fixed buffers or generated bodies of any size (constant memory), with
 *    ETag/Last-Modified and Range (If-Range) support;
 *  - faults: a queue per path, one consumed per request (status, reset after N body
 *    bytes, delayed headers, stalled body, redirect, short body with a longer length);
 *  - every request recorded (method, path, range, client identity, bearer token);
 *  - HTTPS: the client certificate chain (proxy or plain) is checked here in JS against
 *    the test CA, as Node cannot verify RFC 3820 proxies itself; identity = CN of the
 *    end-entity certificate.
 */
import { X509Certificate } from 'node:crypto';
import { constants } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

export type Body = Buffer | { readonly size: number };

export interface Resource {
  readonly body: Body;
  readonly etag?: string;
  readonly lastModified?: string;
  readonly acceptRanges?: boolean;
  /** Send without Content-Length (chunked encoding). */
  readonly chunked?: boolean;
}

export type Fault =
  | { readonly kind: 'status'; readonly status: number; readonly headers?: Record<string, string> }
  | { readonly kind: 'reset'; readonly afterBytes: number }
  | { readonly kind: 'delayHeaders'; readonly ms: number }
  | { readonly kind: 'stall'; readonly afterBytes: number; readonly ms: number }
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  | { readonly kind: 'shortBody'; readonly bytes: number };

export interface Hit {
  readonly method: string;
  readonly path: string;
  readonly range?: string;
  readonly identity?: string;
  readonly authorization?: string;
}

export interface TlsSetup {
  readonly key: string;
  readonly cert: string;
  /** CA that issued client certificates; clients are optional unless `authorize` says otherwise. */
  readonly clientCa: string;
}

export interface ServerOptions {
  readonly tls?: TlsSetup;
  /** true = allowed; false = 403; a number = that status. Called for every request. */
  readonly authorize?: (r: { method: string; path: string; identity?: string; bearer?: string }) => boolean | number;
  /** PUT needs the parent collection to exist (WebDAV): 409 otherwise. */
  readonly requireCollections?: boolean;
  /** HEAD of an uploaded file reports this many bytes more than stored. */
  readonly lieAboutStoredSize?: number;
}

/** Pattern byte at position i of a generated body: varied, and reproducible at any offset. */
export function patternByte(i: number): number {
  return i % 251;
}

const PERIOD = 251;
const PATTERN = Buffer.from(Array.from({ length: PERIOD * 4096 }, (_, i) => patternByte(i)));

export function patternBuffer(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = patternByte(i);
  return b;
}

export class TestServer {
  readonly resources = new Map<string, Resource>();
  readonly stored = new Map<string, Buffer>();
  readonly collections = new Set<string>(['/']);
  readonly hits: Hit[] = [];
  /** Paths that always redirect (loops). */
  readonly redirects = new Map<string, { status: number; location: string }>();
  private readonly faults = new Map<string, Fault[]>();
  private readonly identities = new WeakMap<Socket, string>();
  tlsConnections = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly opts: ServerOptions,
  ) {}

  static async start(opts: ServerOptions = {}): Promise<TestServer> {
    let ts!: TestServer; // eslint-disable-line prefer-const -- assigned after the handler that uses it is built
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      ts.handle(req, res).catch(() => res.destroy());
    };
    const server = opts.tls
      ? createHttpsServer(
          {
            key: opts.tls.key,
            cert: opts.tls.cert,
            ca: opts.tls.clientCa,
            requestCert: true,
            rejectUnauthorized: false,
            // Resumed sessions do not show the client chain again.
            secureOptions: constants.SSL_OP_NO_TICKET,
            sessionTimeout: 0,
          },
          handler,
        )
      : createHttpServer(handler);
    ts = new TestServer(server, opts);
    server.on('connection', (s: Socket) => {
      ts.sockets.add(s);
      s.on('close', () => ts.sockets.delete(s));
    });
    server.on('secureConnection', (s: TLSSocket) => {
      ts.tlsConnections++;
      const id = opts.tls ? identityOf(s, opts.tls.clientCa) : undefined;
      if (id !== undefined) ts.identities.set(s, id);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return ts;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** URL on this server; https servers are named `localhost` (the host certificate's name). */
  url(path: string, scheme?: string): string {
    const s = scheme ?? (this.opts.tls ? 'https' : 'http');
    const host = this.opts.tls ? 'localhost' : '127.0.0.1';
    return `${s}://${host}:${this.port}${path}`;
  }

  /** Queue faults for a path; each request to it consumes one. */
  fault(path: string, ...f: Fault[]): void {
    this.faults.set(path, [...(this.faults.get(path) ?? []), ...f]);
  }

  count(method: string, path?: string): number {
    return this.hits.filter((h) => h.method === method && (path === undefined || h.path === path)).length;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const method = req.method ?? 'GET';
    const identity = this.identities.get(req.socket);
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') === true ? auth.slice(7) : undefined;
    this.hits.push({
      method,
      path,
      ...(req.headers.range === undefined ? {} : { range: req.headers.range }),
      ...(identity === undefined ? {} : { identity }),
      ...(auth === undefined ? {} : { authorization: auth }),
    });

    const always = this.redirects.get(path);
    if (always !== undefined) return this.finish(req, res, always.status, { location: always.location });
    const fault = this.faults.get(path)?.shift();
    if (fault?.kind === 'delayHeaders') await sleep(fault.ms);
    if (fault?.kind === 'status') return this.finish(req, res, fault.status, fault.headers);
    if (fault?.kind === 'redirect') return this.finish(req, res, fault.status, { location: fault.location });

    const verdict =
      this.opts.authorize?.({
        method,
        path,
        ...(identity === undefined ? {} : { identity }),
        ...(bearer === undefined ? {} : { bearer }),
      }) ?? true;
    if (verdict !== true) return this.finish(req, res, verdict === false ? 403 : verdict);

    switch (method) {
      case 'PUT':
        return this.put(req, res, path);
      case 'MKCOL':
        return this.mkcol(req, res, path);
      case 'GET':
      case 'HEAD':
        return this.get(req, res, path, method, fault);
      default:
        return this.finish(req, res, 405);
    }
  }

  private async get(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    method: string,
    fault: Fault | undefined,
  ): Promise<void> {
    const stored = this.stored.get(path);
    const resource: Resource | undefined = stored !== undefined ? { body: stored } : this.resources.get(path);
    if (resource === undefined) return this.finish(req, res, 404);
    const size = Buffer.isBuffer(resource.body) ? resource.body.length : resource.body.size;
    const headers: Record<string, string | number> = {};
    if (resource.etag !== undefined) headers.etag = resource.etag;
    if (resource.lastModified !== undefined) headers['last-modified'] = resource.lastModified;
    if (resource.acceptRanges !== false) headers['accept-ranges'] = 'bytes';
    let start = 0;
    let end = size;
    let status = 200;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    const rangeValid = ifRange === undefined || ifRange === resource.etag || ifRange === resource.lastModified;
    if (range !== null && resource.acceptRanges !== false && rangeValid) {
      start = Number(range[1]);
      end = range[2] === '' ? size : Math.min(size, Number(range[2]) + 1);
      if (start >= size) return this.finish(req, res, 416, { 'content-range': `bytes */${size}` });
      status = 206;
      headers['content-range'] = `bytes ${start}-${end - 1}/${size}`;
    }
    if (method === 'HEAD' && stored !== undefined && this.opts.lieAboutStoredSize !== undefined)
      end += this.opts.lieAboutStoredSize;
    if (resource.chunked !== true) headers['content-length'] = end - start;
    res.writeHead(status, headers);
    if (method === 'HEAD') return void res.end();
    let limit = end;
    let stallAt = -1;
    let stallMs = 0;
    if (fault?.kind === 'reset' || fault?.kind === 'shortBody')
      limit = Math.min(end, start + (fault.kind === 'reset' ? fault.afterBytes : fault.bytes));
    if (fault?.kind === 'stall') {
      stallAt = start + fault.afterBytes;
      stallMs = fault.ms;
    }
    let pos = start;
    while (pos < limit) {
      if (res.destroyed) return;
      if (pos === stallAt) {
        await sleep(stallMs);
        stallAt = -1;
        if (res.destroyed) return;
      }
      const stop = stallAt > pos ? Math.min(limit, stallAt) : limit;
      const chunk = slice(resource.body, pos, Math.min(stop, pos + 1024 * 1024));
      pos += chunk.length;
      if (!res.write(chunk)) await drained(res);
    }
    if (fault?.kind === 'reset' || fault?.kind === 'shortBody') {
      req.socket.destroy();
      return;
    }
    res.end();
  }

  private async put(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const parent = path.slice(0, path.lastIndexOf('/') + 1);
    if (this.opts.requireCollections === true && !this.collections.has(parent)) return this.finish(req, res, 409);
    if (req.headers['if-none-match'] === '*' && this.stored.has(path)) return this.finish(req, res, 412);
    const existed = this.stored.has(path);
    this.stored.set(path, Buffer.concat(chunks));
    this.finish(req, res, existed ? 204 : 201);
  }

  private async mkcol(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    for await (const _ of req) {
      // drain
    }
    const p = path.endsWith('/') ? path : `${path}/`;
    if (this.collections.has(p)) return this.finish(req, res, 405);
    const parent = p.slice(0, p.slice(0, -1).lastIndexOf('/') + 1);
    if (!this.collections.has(parent)) return this.finish(req, res, 409);
    this.collections.add(p);
    this.finish(req, res, 201);
  }

  private finish(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    headers: Record<string, string> = {},
  ): void {
    // Read any request body first, so the client sees the status, not a reset.
    req.resume();
    const send = (): void => {
      if (!res.headersSent) res.writeHead(status, { 'content-length': 0, ...headers });
      res.end();
    };
    if (req.complete) send();
    else req.once('end', send);
  }
}

/** Wait for 'drain', or 'close' when the client went away; leaves no listener behind. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function slice(body: Body, from: number, to: number): Buffer {
  if (Buffer.isBuffer(body)) return body.subarray(from, to);
  const off = from % PERIOD;
  return PATTERN.subarray(off, off + Math.min(to - from, PATTERN.length - off));
}

/** Unref'd: a stalled response must not keep the test process alive after the test. */
function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** CN of the end-entity certificate in the client's chain, if the chain verifies up to `caPem`. */
function identityOf(s: TLSSocket, caPem: string): string | undefined {
  const ca = new X509Certificate(caPem);
  const chain: X509Certificate[] = [];
  let c = s.getPeerCertificate(true);
  const seen = new Set<string>();
  while (c !== undefined && c.raw !== undefined && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    chain.push(new X509Certificate(c.raw));
    c = c.issuerCertificate;
  }
  const eec = chain.findIndex((x) => x.checkIssued(ca) && x.verify(ca.publicKey));
  if (eec < 0) return undefined;
  for (let i = 0; i < eec; i++) {
    const child = chain[i] as X509Certificate;
    const parent = chain[i + 1] as X509Certificate;
    if (!child.verify(parent.publicKey)) return undefined;
  }
  return /CN=([^\n]+)$/.exec((chain[eec] as X509Certificate).subject)?.[1];
}
