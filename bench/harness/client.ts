/**
 * The harness's HTTPS client: undici 7, keep-alive, no pipelining (one request at a
 * time per connection, as ARC clients do), TLS client authentication on every
 * connection. One ArcClient is one connection pool to one endpoint; scenarios that
 * need N concurrent clients make a client with N connections.
 *
 * Requests go through src/client/dispatch.ts (low-level `dispatch`, for A-REX's
 * reason phrases), shared with the `ceres trace` client.
 */
import { readFile } from 'node:fs/promises';
import { Agent } from 'undici';
import { dispatchRequest, type Answer } from '../../src/client/dispatch.js';
import { BenchError, classifyTransportError, refusalFor } from './failures.js';
import { parseBulk, parseJobList, type BulkItem, type ListedJob } from './answers.js';
import { idListJson } from './job-bodies.js';

export interface Credentials {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

async function readPem(flag: string, path: string, must: RegExp, what: string): Promise<Buffer> {
  let data: Buffer;
  try {
    data = await readFile(path);
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'error';
    throw new BenchError('usage', `cannot read --${flag} ${path} (${code})`);
  }
  if (!must.test(data.toString('latin1')))
    throw new BenchError('usage', `--${flag} ${path} holds no ${what} in PEM form`);
  return data;
}

/**
 * Reads the credential files. A proxy file (proxy certificate, its key, the user
 * certificate) may be given as both cert and key: Node's TLS takes the first
 * certificate as the leaf, the following ones as the chain, and the first private key.
 */
export async function readCredentials(cert: string, key: string, ca: string): Promise<Credentials> {
  return {
    cert: await readPem('cert', cert, /-----BEGIN CERTIFICATE-----/, 'certificate'),
    key: await readPem('key', key, /-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/, 'private key'),
    ca: await readPem('ca', ca, /-----BEGIN CERTIFICATE-----/, 'CA certificate'),
  };
}

export type { Answer };

export interface RequestOptions {
  readonly body?: string | Buffer;
  readonly contentType?: string;
  readonly accept?: string;
  /** Count the body bytes but do not keep them (load generation). */
  readonly discardBody?: boolean;
}

export interface ClientOptions {
  readonly connections?: number;
  /** Seconds to wait for an answer's headers and between body chunks. */
  readonly timeoutS?: number;
}

export class ArcClient {
  readonly origin: string;
  readonly servicePath: string;
  version = '1.0';
  readonly #agent: Agent;
  readonly #creds: Credentials;

  constructor(
    readonly serviceUrl: string,
    creds: Credentials,
    readonly options: ClientOptions = {},
  ) {
    const u = new URL(serviceUrl);
    this.origin = u.origin;
    this.servicePath = u.pathname.replace(/\/+$/, '');
    this.#creds = creds;
    const timeout = (options.timeoutS ?? 600) * 1000;
    this.#agent = new Agent({
      connections: options.connections ?? 1,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connect: { cert: creds.cert, key: creds.key, ca: creds.ca, rejectUnauthorized: true, timeout: 15_000 },
    });
  }

  /** Another pool to the same endpoint with its own connections (same version). */
  withConnections(connections: number): ArcClient {
    const c = new ArcClient(this.serviceUrl, this.#creds, { ...this.options, connections });
    c.version = this.version;
    return c;
  }

  get restBase(): string {
    return `${this.servicePath}/rest/${this.version}`;
  }

  /** One request; transport failures become BenchErrors with an actionable message. */
  request(method: string, path: string, o: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { accept: o.accept ?? 'application/json' };
    if (o.contentType !== undefined) headers['content-type'] = o.contentType;
    return dispatchRequest(this.#agent, {
      origin: this.origin,
      path,
      method,
      headers,
      body: o.body,
      ...(o.discardBody === true ? { discardBody: true } : {}),
    }).catch((e: unknown) => {
      throw classifyTransportError(e, this.origin);
    });
  }

  /** Fails with a clear message unless the answer has one of the expected statuses. */
  expect(a: Answer, ok: readonly number[], what: string): Answer {
    if (ok.includes(a.status)) return a;
    throw (
      refusalFor(a.status, this.origin) ??
      new BenchError('http', `${what} answered HTTP ${a.status}${a.reason ? ` ${a.reason}` : ''}${bodyHint(a)}`)
    );
  }

  /** POST jobs?action=new; 201 expected (spec §4.3). */
  async submit(body: string, contentType = 'application/rsl'): Promise<{ items: BulkItem[]; ms: number }> {
    const a = this.expect(
      await this.request('POST', `${this.restBase}/jobs?action=new`, { body, contentType }),
      [201],
      'POST jobs?action=new',
    );
    return { items: parseBulk(a.body.toString('utf8'), 'submission answer'), ms: a.ms };
  }

  /** POST jobs?action=<action> with a JSON id list. A-REX and Ceres answer 201; 200 is tolerated. */
  async action(action: string, ids: readonly string[]): Promise<{ items: BulkItem[]; ms: number; bytes: number }> {
    const a = this.expect(
      await this.request('POST', `${this.restBase}/jobs?action=${action}`, {
        body: idListJson(ids),
        contentType: 'application/json',
      }),
      [200, 201],
      `POST jobs?action=${action}`,
    );
    return { items: parseBulk(a.body.toString('utf8'), `action=${action} answer`), ms: a.ms, bytes: a.body.length };
  }

  /**
   * POST delegations?action=new: the first step of an X.509 delegation, where the service
   * makes a key pair and answers 201 with a certificate request and the delegation's URL
   * in Location (spec §4.5).
   */
  async newDelegation(): Promise<{ id: string; ms: number }> {
    const a = this.expect(
      await this.request('POST', `${this.restBase}/delegations?action=new`, { accept: '*/*' }),
      [201],
      'POST delegations?action=new',
    );
    const loc = a.headers.location;
    const id = (Array.isArray(loc) ? loc[0] : loc)?.replace(/\/+$/, '').split('/').pop();
    if (id === undefined || id === '')
      throw new BenchError('http', 'POST delegations?action=new answered 201 without a Location naming the delegation');
    if (!a.body.toString('latin1').includes('BEGIN CERTIFICATE REQUEST'))
      throw new BenchError('http', 'POST delegations?action=new answered 201 without a certificate request');
    return { id, ms: a.ms };
  }

  /** POST delegations/<id>?action=delete; the answer is returned, not judged (cleanup). */
  deleteDelegation(id: string): Promise<Answer> {
    return this.request('POST', `${this.restBase}/delegations/${encodeURIComponent(id)}?action=delete`);
  }

  /** GET jobs[?state=...]. */
  async list(stateFilter?: string): Promise<{ jobs: ListedJob[]; ms: number; bytes: number }> {
    const q = stateFilter === undefined ? '' : `?state=${encodeURIComponent(stateFilter).replace(/%2C/g, ',')}`;
    const a = this.expect(await this.request('GET', `${this.restBase}/jobs${q}`), [200], 'GET jobs');
    return { jobs: parseJobList(a.body.toString('utf8')), ms: a.ms, bytes: a.body.length };
  }

  async close(): Promise<void> {
    await this.#agent.close().catch(() => undefined);
  }
}

function bodyHint(a: Answer): string {
  const t = a.body.toString('utf8', 0, Math.min(a.body.length, 200)).replace(/\s+/g, ' ').trim();
  return t === '' ? '' : `: ${t}`;
}
