/**
 * "Could this user fetch the source themselves?" — asked before the cache hands a
 * user a file someone else downloaded. A HEAD with the user's credential; servers
 * that do not implement HEAD (405/501) get a one-byte ranged GET instead. The
 * answer's validators let the cache notice that the source changed.
 */
import type { Credential } from '../credentials.js';
import { stagingError } from '../staging-error.js';
import { statusError } from './classify.js';
import { discard, httpRequest, type HttpSettings } from './http-request.js';

export interface AccessInfo {
  readonly etag?: string;
  readonly lastModified?: string;
  /** Size of the source when the server told it (HEAD Content-Length or the Content-Range total). */
  readonly size?: number;
}

const DENIED = new Set([401, 403, 404, 410]);

export async function checkAccess(
  s: HttpSettings,
  url: URL,
  credential: Credential | undefined,
  signal: AbortSignal,
): Promise<AccessInfo> {
  let { response } = await httpRequest(s, { method: 'HEAD', url, credential }, signal);
  await discard(response);
  if (response.statusCode === 405 || response.statusCode === 501) {
    ({ response } = await httpRequest(s, { method: 'GET', url, credential, headers: { range: 'bytes=0-0' } }, signal));
    await discard(response); // one byte, or (a server ignoring Range) cut off after a few KiB
  }
  const code = response.statusCode;
  if (DENIED.has(code)) {
    const e = statusError(code, response.statusText, response.headers);
    throw stagingError('CE_ERR_STAGING_ACCESS_DENIED', `access check refused: ${e.message}`);
  }
  if (code !== 200 && code !== 206) throw statusError(code, response.statusText, response.headers);
  const h = (n: string): string | undefined => {
    const v = response.headers[n];
    return Array.isArray(v) ? v[0] : v;
  };
  const range = /\/(\d+)$/.exec(h('content-range') ?? '');
  const len = h('content-length');
  const size =
    range !== null
      ? Number(range[1])
      : code === 200 && len !== undefined && /^\d+$/.test(len)
        ? Number(len)
        : undefined;
  const etag = h('etag');
  const lastModified = h('last-modified');
  return {
    ...(etag === undefined ? {} : { etag }),
    ...(lastModified === undefined ? {} : { lastModified }),
    ...(size === undefined ? {} : { size }),
  };
}
