/**
 * One HTTP exchange of a transfer, following redirects by our own rules: at most
 * `maxRedirects` hops, never from https to http (a downgrade would expose the data
 * and the bearer token), only to http(s). A bearer token goes only over TLS and only
 * to the host the user named; the X.509 client certificate is presented to every
 * host (storage doors redirect to pool nodes that need it, and it is public).
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Credential } from '../credentials.js';
import { redactUrl } from '../redact.js';
import { stagingError } from '../staging-error.js';
import type { AgentSet } from './agents.js';
import { networkError } from './classify.js';

export interface HttpSettings {
  readonly agents: AgentSet;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly maxRedirects: number;
  readonly highWaterMark: number;
}

export interface HttpCall {
  readonly method: 'GET' | 'HEAD' | 'PUT' | 'MKCOL';
  readonly url: URL;
  readonly credential: Credential | undefined;
  readonly headers?: Readonly<Record<string, string>>;
  /** Body factory: called again for every hop, since a redirected PUT re-sends it. */
  readonly body?: () => Promise<Readable>;
}

export interface HttpReply {
  readonly response: Dispatcher.ResponseData;
  /** The URL that answered (after redirects). */
  readonly url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function httpRequest(s: HttpSettings, call: HttpCall, signal: AbortSignal): Promise<HttpReply> {
  let url = call.url;
  for (let hop = 0; ; hop++) {
    const headers: Record<string, string> = { 'user-agent': 'ceres-staging', ...call.headers };
    if (call.credential?.kind === 'jwt' && url.protocol === 'https:' && url.hostname === call.url.hostname)
      headers.authorization = `Bearer ${call.credential.token}`;
    let response: Dispatcher.ResponseData;
    try {
      const body = call.body === undefined ? null : await call.body();
      const agent = await s.agents.agentFor(call.credential);
      response = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: call.method,
        headers,
        body,
        signal,
        headersTimeout: s.headersTimeoutMs,
        bodyTimeout: s.bodyTimeoutMs,
        highWaterMark: s.highWaterMark,
      });
    } catch (e) {
      throw networkError(e, signal);
    }
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode) || typeof location !== 'string') return { response, url };
    await discard(response);
    if (hop >= s.maxRedirects)
      throw stagingError('CE_ERR_STAGING_REDIRECT', `too many redirects (more than ${s.maxRedirects})`);
    if (response.statusCode === 303 && call.method !== 'GET' && call.method !== 'HEAD') {
      throw stagingError('CE_ERR_STAGING_REDIRECT', `the server answered ${call.method} with 303 See Other`);
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw stagingError('CE_ERR_STAGING_REDIRECT', 'redirect to a malformed URL');
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw stagingError('CE_ERR_STAGING_REDIRECT', `redirect to an unsupported protocol (${redactUrl(next)})`);
    if (url.protocol === 'https:' && next.protocol === 'http:')
      throw stagingError('CE_ERR_STAGING_REDIRECT', `redirect from https to http refused (${redactUrl(next)})`);
    next.hash = '';
    url = next;
  }
}

/** Drop a body we do not want, leaving the connection reusable when possible. */
export async function discard(r: Dispatcher.ResponseData): Promise<void> {
  try {
    await r.body.dump({ limit: 64 * 1024 });
  } catch {
    r.body.destroy();
  }
}
