/**
 * A client of the ARGO Messaging Service (AMS) for one topic, as APEL's senders use it:
 *
 * 1. the token call, `GET https://HOST:TOKENPORT/v1/service-types/ams/hosts/HOST:authx509`,
 *    authenticated by the host certificate as TLS client certificate, answers
 *    `{"token": "..."}`;
 * 2. the publish call, `POST https://HOST:PORT/v1/projects/PROJECT/topics/TOPIC:publish`
 *    with the token in the `x-api-key` header and `{"messages": [{"attributes": {...},
 *    "data": BASE64}]}`, answers 200 and `{"messageIds": [...]}`.
 *
 * Only a 200 with one id per message counts as published. Errors come as
 * `{"error": {"code", "message", "status"}}`; every failure (an answer other than 200, a
 * timeout, a refused or cut connection) is an AmsError the caller retries later. A
 * token refused by the publish call (401, 403: expired or revoked) is fetched again once
 * at once. The messaging service has no idempotent publish: a repeat after a lost answer
 * is the caller's to make harmless.
 */
import { Agent, request } from 'node:https';

export interface AmsOptions {
  readonly host: string;
  readonly port: number;
  readonly tokenPort: number;
  readonly project: string;
  readonly topic: string;
  /** Host certificate and key (PEM): the TLS client certificate of the token call. */
  readonly cert: string;
  readonly key: string;
  /** CAs that may sign the messaging service's certificate (PEM). */
  readonly ca: readonly string[];
  /**
   * The pair and CAs as they are now, asked before each call (a host certificate renewed at
   * SIGHUP, a CA directory updated): a change takes a new connection. Without it, `cert`, `key`
   * and `ca` serve for the client's life.
   */
  readonly currentTls?: () => AmsTls;
  readonly timeoutMs: number;
}

/** The TLS side of the client: its certificate and key, and the CAs it trusts (PEM). */
export interface AmsTls {
  readonly cert: string;
  readonly key: string;
  readonly ca: readonly string[];
}

function sameTls(a: AmsTls, b: AmsTls): boolean {
  return a.cert === b.cert && a.key === b.key && a.ca.length === b.ca.length && a.ca.every((c, i) => c === b.ca[i]);
}

export interface AmsMessage {
  readonly attributes: Readonly<Record<string, string>>;
  /** The message as sent (base64-encoded on the wire). */
  readonly data: string;
}

export class AmsError extends Error {
  constructor(
    message: string,
    /** HTTP status of the answer; undefined: none came (timeout, connection refused or cut). */
    readonly status: number | undefined,
    readonly call: 'token' | 'publish',
  ) {
    super(message);
  }
}

const MAX_ANSWER_BYTES = 1024 * 1024;

export class AmsClient {
  readonly #o: AmsOptions;
  #agent: Agent;
  #tls: AmsTls;
  #token: string | undefined;

  constructor(o: AmsOptions) {
    this.#o = o;
    this.#tls = o.currentTls?.() ?? { cert: o.cert, key: o.key, ca: o.ca };
    this.#agent = AmsClient.#agentFor(this.#tls);
  }

  static #agentFor(t: AmsTls): Agent {
    return new Agent({ keepAlive: true, maxSockets: 1, cert: t.cert, key: t.key, ca: [...t.ca] });
  }

  /**
   * The connection pool for the pair and CAs of now. Calls are made one at a time (the
   * publisher waits for each), so the old pool has nothing in flight when it is closed.
   */
  #agentNow(): Agent {
    const now = this.#o.currentTls?.();
    if (now !== undefined && !sameTls(now, this.#tls)) {
      this.#agent.destroy();
      this.#tls = now;
      // The token stays: it names the host, not the connection, and one refused is asked again.
      this.#agent = AmsClient.#agentFor(now);
    }
    return this.#agent;
  }

  /** Publishes the messages; resolves with their ids once the service answered 200. */
  async publish(messages: readonly AmsMessage[]): Promise<string[]> {
    const fresh = this.#token === undefined;
    try {
      return await this.#publishOnce(messages, this.#token ?? (await this.#fetchToken()));
    } catch (e) {
      if (!(e instanceof AmsError) || fresh || (e.status !== 401 && e.status !== 403)) throw e;
      // A token that served before and is refused now has ended: one new one, one try.
      this.#token = undefined;
      return this.#publishOnce(messages, await this.#fetchToken());
    }
  }

  close(): void {
    this.#agent.destroy();
  }

  async #fetchToken(): Promise<string> {
    const o = this.#o;
    const path = `/v1/service-types/ams/hosts/${encodeURIComponent(o.host)}:authx509`;
    const body = await this.#call('token', 'GET', o.tokenPort, path, undefined, {});
    const token = (body as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || token === '') throw new AmsError(`the token call answered no token`, 200, 'token');
    this.#token = token;
    return token;
  }

  async #publishOnce(messages: readonly AmsMessage[], token: string): Promise<string[]> {
    const o = this.#o;
    const path = `/v1/projects/${encodeURIComponent(o.project)}/topics/${encodeURIComponent(o.topic)}:publish`;
    const payload = JSON.stringify({
      messages: messages.map((m) => ({
        attributes: m.attributes,
        data: Buffer.from(m.data, 'utf8').toString('base64'),
      })),
    });
    const body = await this.#call('publish', 'POST', o.port, path, payload, { 'x-api-key': token });
    const ids = (body as { messageIds?: unknown } | undefined)?.messageIds;
    if (!Array.isArray(ids) || ids.length !== messages.length || !ids.every((x) => typeof x === 'string'))
      throw new AmsError('the publish call answered 200 without one message id per message', 200, 'publish');
    return ids;
  }

  #call(
    call: 'token' | 'publish',
    method: string,
    port: number,
    path: string,
    payload: string | undefined,
    headers: Record<string, string>,
  ): Promise<unknown> {
    const o = this.#o;
    const where = `${call} call to ${o.host}:${port}`;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: o.host.replace(/^\[(.*)\]$/, '$1'),
          servername: /^[\d.]+$|:/.test(o.host) ? undefined : o.host,
          port,
          path,
          method,
          agent: this.#agentNow(),
          timeout: o.timeoutMs,
          headers: {
            accept: 'application/json',
            ...(payload !== undefined
              ? { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(payload) }
              : {}),
            ...headers,
          },
        },
        (res) => {
          const parts: Buffer[] = [];
          let n = 0;
          res.on('data', (d: Buffer) => {
            n += d.length;
            if (n > MAX_ANSWER_BYTES) req.destroy(new Error('answer larger than 1 MB'));
            else parts.push(d);
          });
          res.on('error', (e) => reject(new AmsError(`${where}: ${e.message}`, undefined, call)));
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            let json: unknown;
            try {
              json = text === '' ? undefined : JSON.parse(text);
            } catch {
              json = undefined;
            }
            const status = res.statusCode ?? 0;
            if (status === 200) {
              if (json === undefined) reject(new AmsError(`${where}: 200 without a JSON answer`, 200, call));
              else resolve(json);
              return;
            }
            const err = (json as { error?: { message?: unknown; status?: unknown } } | undefined)?.error;
            const detail =
              err && typeof err.message === 'string'
                ? `${err.message}${typeof err.status === 'string' ? ` (${err.status})` : ''}`
                : text.slice(0, 200).trim();
            reject(new AmsError(`${where} answered ${status}${detail ? `: ${detail}` : ''}`, status, call));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${o.timeoutMs} ms`)));
      req.on('error', (e) => reject(new AmsError(`${where}: ${e.message}`, undefined, call)));
      req.end(payload);
    });
  }
}
