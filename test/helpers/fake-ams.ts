/**
 * A stand-in for the ARGO Messaging Service (which cannot be installed here): a loopback
 * HTTPS server with the two calls APEL's senders use, in the shapes of the public AMS
 * documentation:
 *
 * - `GET /v1/service-types/ams/hosts/HOST:authx509`: a TLS client certificate the given
 *   CA signed gets `{"token": "..."}`; none or another one gets 401 UNAUTHENTICATED;
 * - `POST /v1/projects/P/topics/T:publish` (token in `x-api-key` or `?key=`): 200 and
 *   `{"messageIds": [...]}`; an unknown token 401 UNAUTHENTICATED; a token of another
 *   project 403 FORBIDDEN; another project or topic 404 NOT_FOUND; a body that is no
 *   JSON, no `messages` list or a message without base64 `data`, 400 INVALID_ARGUMENT.
 *   Errors are `{"error": {"code", "message", "status"}}`.
 *
 * Every published message is kept with the signed text (read from the S/MIME structure
 * at once) and its signature checked by `openssl smime -verify` against the CA (purpose
 * any: a host certificate is no S/MIME certificate, and APEL's receiver checks the
 * signer itself) after the answer, as APEL checks it after the messaging service took
 * the message: `verified()` waits for every check. Faults are injected per
 * call: a status with its error body, no answer at all (`hang`), or a cut connection.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A status answered with its error body; no answer; a cut connection; a 200 without message ids. */
export type Fault = number | 'hang' | 'reset' | 'no-ids';

export interface ReceivedMessage {
  readonly amsId: string;
  readonly empaid: string | undefined;
  /** The token it was published with: which run of a client sent it (a token is fetched once per process). */
  readonly token: string;
  /** The signed text (lines end with CRLF, as S/MIME has them); undefined: no S/MIME signed text. */
  readonly text: string | undefined;
  /** Set by the check (see verified()): why the signature did not verify. */
  signatureError: string | undefined;
  /** Set by the check: subject of the signing certificate. */
  signer: string | undefined;
}

/** The text part of an S/MIME multipart/signed message, without its headers. */
function signedText(raw: string): string | undefined {
  const b = /boundary="?([^";\r\n]+)"?/.exec(raw)?.[1];
  if (b === undefined) return undefined;
  const start = raw.indexOf(`\n--${b}`);
  // The delimiter's line break (CRLF or, as openssl writes it, LF) is not the text's.
  const end = raw.indexOf(`\n--${b}`, start + 1);
  if (start < 0 || end < 0) return undefined;
  const part = raw.slice(raw.indexOf('\n', start + 1) + 1, raw[end - 1] === '\r' ? end - 1 : end);
  const blank = /\r?\n\r?\n/.exec(part);
  return blank ? part.slice(blank.index + blank[0].length) : undefined;
}

export interface FakeAmsOptions {
  readonly cert: string;
  readonly key: string;
  /** CA (PEM) of the client certificates accepted by the token call, and of signatures. */
  readonly ca: string;
  readonly project?: string;
  readonly topic?: string;
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  408: 'TIMEOUT',
  409: 'ALREADY_EXISTS',
  413: 'INVALID_ARGUMENT',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function run(cmd: string, args: string[], input: Buffer): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = execFile(cmd, args, { maxBuffer: 64 * 1024 * 1024 }, (e, out, err) =>
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out, err }),
    );
    c.stdin!.on('error', () => undefined);
    c.stdin!.end(input);
  });
}

export class FakeAms {
  readonly project: string;
  readonly topic: string;
  readonly received: ReceivedMessage[] = [];
  /** The tokens issued by the token call, in order. */
  readonly issued: string[] = [];
  /** Every request: call, status answered (0: none). */
  readonly calls: { call: 'token' | 'publish' | 'other'; status: number }[] = [];
  /** Faults for the next token calls, one each, in order. */
  readonly tokenFaults: Fault[] = [];
  /** Faults for the next publish calls, one each, in order. */
  readonly publishFaults: Fault[] = [];
  /** Called with the messages of a publish just before its 200 is written (e.g. to stop the sender). */
  beforeAnswer: ((m: readonly ReceivedMessage[]) => void) | undefined;
  /** Called once the 200 of a publish has been written (e.g. to kill the sender right then). */
  onPublished: ((m: ReceivedMessage) => void) | undefined;
  #server: Server;
  #tokens = new Map<string, string>();
  #n = 0;
  #dir: string;
  #caFile: string;
  #hung = new Set<ServerResponse>();
  #checks: Promise<void>[] = [];
  /** Signature checks running at once (each an openssl process). */
  #slots = 2;
  #waiting: (() => void)[] = [];

  private constructor(o: FakeAmsOptions) {
    this.project = o.project ?? 'accounting';
    this.topic = o.topic ?? 'gLite-APEL';
    this.#dir = mkdtempSync(join(tmpdir(), 'ceres-fake-ams-'));
    this.#caFile = join(this.#dir, 'ca.pem');
    writeFileSync(this.#caFile, o.ca);
    this.#server = createServer(
      { cert: o.cert, key: o.key, ca: o.ca, requestCert: true, rejectUnauthorized: false },
      (req, res) => void this.#handle(req, res),
    );
  }

  static async start(o: FakeAmsOptions): Promise<FakeAms> {
    const f = new FakeAms(o);
    await new Promise<void>((r) => f.#server.listen(0, '127.0.0.1', r));
    return f;
  }

  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  /** Forgets every token issued: the next publish with one gets 401. */
  revokeTokens(): void {
    this.#tokens.clear();
  }

  /** A token for another project (publishing with it is forbidden). */
  foreignToken(): string {
    this.#tokens.set('foreign', 'other-project');
    return 'foreign';
  }

  /** Waits for the signature check of every message received so far. */
  async verified(): Promise<void> {
    await Promise.all(this.#checks);
  }

  /** The signed texts received, in order (repeats included). */
  texts(): string[] {
    return this.received.map((m) => m.text ?? '');
  }

  async close(): Promise<void> {
    await this.verified();
    for (const r of this.#hung) r.destroy();
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #error(res: ServerResponse, code: number, message: string): number {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code, message, status: STATUS[code] ?? 'INTERNAL' } }));
    return code;
  }

  /** Applies the next fault of `list`; returns the status answered (0: none), or undefined (no fault). */
  #fault(list: Fault[], req: IncomingMessage, res: ServerResponse): number | undefined {
    const f = list.shift();
    if (f === undefined) return undefined;
    if (f === 'hang') {
      this.#hung.add(res);
      return 0;
    }
    if (f === 'reset') {
      req.socket.destroy();
      return 0;
    }
    if (f === 'no-ids') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      return 200;
    }
    return this.#error(res, f, f >= 500 ? 'Something bad happened' : 'Injected failure');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'https://ams');
    const token = /^\/v1\/service-types\/ams\/hosts\/[^/]+:authx509$/.test(url.pathname);
    const publish = /^\/v1\/projects\/([^/]+)\/topics\/([^/]+):publish$/.exec(url.pathname);
    const call = token ? 'token' : publish ? 'publish' : 'other';
    const status = await (async (): Promise<number> => {
      if (token && req.method === 'GET') {
        const injected = this.#fault(this.tokenFaults, req, res);
        if (injected !== undefined) return injected;
        if (!(req.socket as TLSSocket).authorized) return this.#error(res, 401, 'Unauthenticated');
        const t = `token-${++this.#n}`;
        this.#tokens.set(t, this.project);
        this.issued.push(t);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ token: t }));
        return 200;
      }
      if (publish && req.method === 'POST') {
        const injected = this.#fault(this.publishFaults, req, res);
        if (injected !== undefined) return injected;
        const key = req.headers['x-api-key'] ?? url.searchParams.get('key') ?? '';
        const project = this.#tokens.get(String(key));
        if (project === undefined) return this.#error(res, 401, 'Unauthenticated');
        if (project !== this.project) return this.#error(res, 403, 'Access to this resource is forbidden');
        if (decodeURIComponent(publish[1]!) !== this.project || decodeURIComponent(publish[2]!) !== this.topic)
          return this.#error(res, 404, "Topic doesn't exist");
        let messages: { data?: unknown; attributes?: Record<string, string> }[];
        try {
          const j = JSON.parse(body) as { messages?: unknown };
          if (!Array.isArray(j.messages) || j.messages.length === 0) throw new Error('no messages');
          messages = j.messages as typeof messages;
          if (!messages.every((m) => typeof m.data === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(m.data)))
            throw new Error('data is not base64');
        } catch {
          return this.#error(res, 400, 'Invalid Message Arguments');
        }
        const got = messages.map((m) => {
          const raw = Buffer.from(m.data as string, 'base64');
          const r: ReceivedMessage = {
            amsId: String(++this.#n),
            empaid: m.attributes?.empaid,
            token: String(key),
            text: signedText(raw.toString('utf8')),
            signatureError: undefined,
            signer: undefined,
          };
          this.#checks.push(this.#verify(raw, r));
          return r;
        });
        this.received.push(...got);
        this.beforeAnswer?.(got);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ messageIds: got.map((g) => g.amsId) }), () => {
          for (const g of got) this.onPublished?.(g);
        });
        return 200;
      }
      return this.#error(res, 404, 'Not found');
    })();
    this.calls.push({ call, status });
  }

  async #verify(signed: Buffer, r: ReceivedMessage): Promise<void> {
    if (this.#slots === 0) await new Promise<void>((go) => this.#waiting.push(go));
    else this.#slots--;
    try {
      const signerFile = join(this.#dir, `signer-${r.amsId}.pem`);
      const v = await run(
        'openssl',
        ['smime', '-verify', '-CAfile', this.#caFile, '-purpose', 'any', '-text', '-signer', signerFile],
        signed,
      );
      if (v.code !== 0) r.signatureError = v.err.trim() || `openssl exit ${v.code}`;
      else if (v.out.replace(/\r\n/g, '\n') !== r.text?.replace(/\r\n/g, '\n'))
        r.signatureError = 'the signed text is not the text part';
      else r.signer = new X509Certificate(readFileSync(signerFile)).subject.replace(/\n/g, ', ');
      rmSync(signerFile, { force: true });
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#slots++;
    }
  }
}
