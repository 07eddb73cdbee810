/**
 * A client of one ARC REST service (`https://host:port/arex`) with the caller's own
 * credential: a proxy presented in the TLS handshake, or a bearer token sent with every
 * request. Used by `ceres trace`; outside the service (docs/architecture.md).
 *
 * Every request opens its own connection (no keep-alive): a trace that outlives the
 * service must see the refusal at the step where it happens, not the close of an idle
 * connection it kept from an earlier step. Every request takes the step's AbortSignal,
 * so nothing waits longer than the step may take.
 */
import { Agent } from 'undici';
import { dispatchRequest, type Answer } from './dispatch.js';

export type { Answer };

export interface ClientCredential {
  /** A proxy file (certificates and key, PEM): the TLS client credential. */
  readonly proxyPem?: string;
  /** A bearer token, sent as `Authorization: Bearer`; never printed. */
  readonly token?: string;
}

export interface RequestOptions {
  readonly body?: string | Buffer;
  readonly contentType?: string;
  /** Default `application/json`; '' sends none (delegation calls, as the ARC client). */
  readonly accept?: string;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

export class RestClient {
  readonly origin: string;
  /** The service path without a trailing slash (`/arex`). */
  readonly servicePath: string;
  /** The interface version spoken (`1.0`, `1.1`), chosen from `GET rest`. */
  version = '1.0';
  readonly #agent: Agent;
  readonly #token: string | undefined;

  constructor(serviceUrl: string, credential: ClientCredential, caPems: readonly string[]) {
    const u = new URL(serviceUrl);
    this.origin = u.origin;
    this.servicePath = u.pathname.replace(/\/+$/, '');
    this.#token = credential.token;
    const pem = credential.proxyPem;
    this.#agent = new Agent({
      connect: {
        ca: [...caPems],
        rejectUnauthorized: true,
        ...(pem === undefined ? {} : { cert: pem, key: pem }),
      },
    });
  }

  /** `{service}/rest/{version}/{rel}`. */
  rest(method: string, rel: string, o: RequestOptions = {}): Promise<Answer> {
    return this.request(method, `${this.servicePath}/rest/${this.version}/${rel}`, o);
  }

  /** One request to a path of the origin. Transport errors reject as they are (./transport-errors.ts). */
  request(method: string, path: string, o: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'user-agent': 'ceres-trace', ...o.headers };
    const accept = o.accept ?? 'application/json';
    if (accept !== '') headers.accept = accept;
    if (o.contentType !== undefined) headers['content-type'] = o.contentType;
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    return dispatchRequest(this.#agent, {
      origin: this.origin,
      path,
      method,
      headers,
      body: o.body,
      reset: true,
      ...(o.signal === undefined ? {} : { signal: o.signal }),
    });
  }

  async close(): Promise<void> {
    await this.#agent.close().catch(() => undefined);
  }
}
