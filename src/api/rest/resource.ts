/**
 * A REST resource: the methods a path supports and their handlers. The router
 * (router.ts) matches the path to one resource and answers a method the resource
 * lacks with 405 and an Allow header, so "unsupported methods" follow from the table.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Format } from '../../http/negotiate.js';
import type { Caller } from '../../http/caller.js';

export type ApiVersion = '1.0' | '1.1';
export const API_VERSIONS: readonly ApiVersion[] = ['1.0', '1.1'];

export interface RestRequest {
  readonly raw: IncomingMessage;
  readonly reply: FastifyReply;
  readonly method: string;
  readonly version: ApiVersion;
  readonly query: ReadonlyMap<string, string>;
  /** Raw (still percent-encoded) path segments after the resource's fixed part. */
  readonly rest: readonly string[];
  /** Path of this request's API base, e.g. `/arex/rest/1.1` (for Location headers). */
  readonly basePath: string;
  /** Absolute URL of the request as the client addressed it (for PROPFIND hrefs). */
  readonly requestUrl: string;
  readonly format: Format;
  readonly log: FastifyBaseLogger;
  /** The authenticated caller; throws a 401 CeError when there is none. */
  caller(): Caller;
}

/** Returns a value or a promise of one. */
export type Handler = (req: RestRequest) => unknown;

export interface Resource {
  readonly methods: Readonly<Partial<Record<string, Handler>>>;
  /** Public resources (versions, info) do not require an authenticated caller. */
  readonly public?: boolean;
}

export function allowHeader(r: Resource): string {
  const m = new Set(Object.keys(r.methods));
  if (m.has('GET')) m.add('HEAD');
  return [...m].join(', ');
}
