/**
 * One attempt of an HTTP PUT of a session file. WebDAV servers refuse a PUT whose
 * parent collection is missing (409 Conflict, RFC 4918 §9.7.1; some say 404). For
 * dav:// and davs:// targets the parents are made sure of with MKCOL before the first
 * PUT (a server may answer early and drop the rest of a large body), nearest first and
 * climbing only as far as needed; collections known to exist are remembered for the
 * job. For http(s) targets the same happens only after a 409/404, and the PUT is
 * repeated once. `overwrite=no` sends If-None-Match: * so an existing destination is
 * kept (412).
 */
import { pipeline, Transform, type Readable } from 'node:stream';
import type { Credential } from '../credentials.js';
import { stagingError } from '../staging-error.js';
import { statusError } from './classify.js';
import { discard, httpRequest, type HttpSettings } from './http-request.js';

export interface UploadSpec {
  readonly url: URL;
  readonly credential: Credential | undefined;
  /** Opens the local file for reading from its start (called for every PUT sent). */
  readonly open: () => Promise<Readable>;
  readonly size: number;
  readonly overwrite: boolean;
  /** dav:// or davs:// target: create missing parent collections before the PUT. */
  readonly webdav: boolean;
  /** Collections of a job's uploads that exist or are being made (one MKCOL each, however many uploads go there). */
  readonly collections: Map<string, Promise<void>>;
  /** Check the destination's size with HEAD afterwards. */
  readonly verify: boolean;
  /** Bytes sent so far (drops back when a PUT is repeated). */
  readonly onProgress?: (fileBytes: number) => void;
}

export async function uploadAttempt(s: HttpSettings, spec: UploadSpec, signal: AbortSignal): Promise<void> {
  if (spec.webdav) await makeParents(s, spec, signal, false);
  let status = await put(s, spec, signal);
  if (status.code === 409 || status.code === 404) {
    await makeParents(s, spec, signal, true);
    status = await put(s, spec, signal);
  }
  if (status.code === 412 && !spec.overwrite)
    throw stagingError('CE_ERR_STAGING_REMOTE_STATUS', 'the destination exists and overwrite=no was given');
  if (status.code < 200 || status.code > 299)
    throw status.error ?? stagingError('CE_ERR_STAGING_REMOTE_STATUS', `${status.code}`);
  if (spec.verify) await verifySize(s, spec, status.url, signal);
}

interface PutStatus {
  code: number;
  url: URL;
  error?: Error;
}

async function put(s: HttpSettings, spec: UploadSpec, signal: AbortSignal): Promise<PutStatus> {
  const headers: Record<string, string> = {
    'content-length': String(spec.size),
    'content-type': 'application/octet-stream',
  };
  if (!spec.overwrite) headers['if-none-match'] = '*';
  const opened: Readable[] = [];
  try {
    const { response, url } = await httpRequest(
      s,
      {
        method: 'PUT',
        url: spec.url,
        credential: spec.credential,
        headers,
        body: async () => {
          let sent = 0;
          spec.onProgress?.(0);
          const counter = new Transform({
            readableHighWaterMark: s.highWaterMark,
            writableHighWaterMark: s.highWaterMark,
            transform(chunk: Buffer, _enc, done) {
              sent += chunk.length;
              spec.onProgress?.(sent);
              done(null, chunk);
            },
          });
          const source = await spec.open();
          opened.push(source, counter);
          return pipeline(source, counter, () => undefined);
        },
      },
      signal,
    );
    await discard(response);
    if (response.statusCode >= 200 && response.statusCode <= 299) return { code: response.statusCode, url };
    return {
      code: response.statusCode,
      url,
      error: statusError(response.statusCode, response.statusText, response.headers),
    };
  } finally {
    // A body the server did not read to the end must not keep its file open.
    for (const r of opened) r.destroy();
  }
}

async function makeParents(s: HttpSettings, spec: UploadSpec, signal: AbortSignal, force: boolean): Promise<void> {
  const segments = spec.url.pathname.split('/').slice(1, -1);
  // Collections from the nearest parent upwards: /a/b/c/ then /a/b/ ...
  const collections = segments.map((_, i) => `/${segments.slice(0, i + 1).join('/')}/`).reverse();
  const key = (path: string): string => `${spec.url.origin}${path}`;
  if (force) for (const c of collections) spec.collections.delete(key(c));
  const ensure = (i: number): Promise<void> => {
    const path = collections[i];
    if (path === undefined) return Promise.resolve();
    const known = spec.collections.get(key(path));
    if (known !== undefined) return known;
    const making = (async () => {
      let code = await mkcol(s, spec, path, signal);
      if (code === 409 && i + 1 < collections.length) {
        await ensure(i + 1);
        code = await mkcol(s, spec, path, signal);
      }
      if (!collectionExists(code)) throw mkcolError(code);
    })();
    spec.collections.set(key(path), making);
    making.catch(() => spec.collections.delete(key(path)));
    return making;
  };
  await ensure(0);
}

async function mkcol(s: HttpSettings, spec: UploadSpec, path: string, signal: AbortSignal): Promise<number> {
  const url = new URL(spec.url.href);
  url.pathname = path;
  url.search = '';
  const { response } = await httpRequest(s, { method: 'MKCOL', url, credential: spec.credential }, signal);
  await discard(response);
  return response.statusCode;
}

/** 201 Created; 405 = it exists already (RFC 4918 §9.3.1); 301 = exists, redirect to the slash form. */
function collectionExists(code: number): boolean {
  return code === 201 || code === 200 || code === 204 || code === 405 || code === 301;
}

function mkcolError(code: number): Error {
  return stagingError('CE_ERR_STAGING_REMOTE_STATUS', `cannot create the parent collection (MKCOL answered ${code})`, {
    transient: code >= 500 && code !== 501,
  });
}

async function verifySize(s: HttpSettings, spec: UploadSpec, url: URL, signal: AbortSignal): Promise<void> {
  const { response } = await httpRequest(s, { method: 'HEAD', url, credential: spec.credential }, signal);
  await discard(response);
  const len = response.headers['content-length'];
  if (response.statusCode !== 200 || typeof len !== 'string' || !/^\d+$/.test(len)) return; // the server cannot tell; nothing to compare
  if (Number(len) !== spec.size) {
    throw stagingError(
      'CE_ERR_STAGING_SIZE_MISMATCH',
      `the destination holds ${len} bytes after the upload, ${spec.size} were sent`,
      { transient: true },
    );
  }
}
