/**
 * One attempt of an HTTP download into a file, streaming (memory bounded by the
 * highWaterMark whatever the size), verifying size on the way and feeding checksum
 * hashers. State survives between attempts so that a retry after a broken body
 * resumes with a Range request when the server supports it and the file on disk is
 * exactly what was counted; otherwise it starts over.
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { once } from 'node:events';
import { createHasher, type ChecksumAlgorithm, type Hasher } from '../checksum.js';
import type { Credential } from '../credentials.js';
import { StagingError, stagingError } from '../staging-error.js';
import { networkError, statusError } from './classify.js';
import { discard, httpRequest, type HttpSettings } from './http-request.js';

export interface DownloadSpec {
  readonly url: URL;
  readonly credential: Credential | undefined;
  /** Temporary file the body is written to. */
  readonly path: string;
  /** Mode of a newly created file (less the umask). */
  readonly mode?: number;
  readonly expectedSize?: number;
  readonly algorithms: readonly ChecksumAlgorithm[];
  /** Bytes of the file so far (drops back when a retry starts over). */
  readonly onProgress?: (fileBytes: number) => void;
}

export class DownloadState {
  bytes = 0;
  hashers = new Map<ChecksumAlgorithm, Hasher>();
  /** Strong ETag or Last-Modified of the representation being fetched. */
  validator: string | undefined;
  etag: string | undefined;
  lastModified: string | undefined;
  resumable = false;

  constructor(private readonly algorithms: readonly ChecksumAlgorithm[]) {
    this.reset();
  }

  reset(): void {
    this.bytes = 0;
    this.hashers = new Map(this.algorithms.map((a) => [a, createHasher(a)]));
  }

  digests(): Map<ChecksumAlgorithm, string> {
    return new Map([...this.hashers].map(([a, h]) => [a, h.digest()]));
  }
}

export async function downloadAttempt(
  s: HttpSettings,
  spec: DownloadSpec,
  state: DownloadState,
  signal: AbortSignal,
): Promise<void> {
  let resume = state.bytes > 0 && state.resumable && state.validator !== undefined;
  if (resume) {
    // Data counted but lost in a destroyed write stream cannot be resumed after.
    const onDisk = await stat(spec.path).then(
      (st) => st.size,
      () => -1,
    );
    if (onDisk !== state.bytes) resume = false;
  }
  const headers: Record<string, string> = {};
  if (resume) {
    headers.range = `bytes=${state.bytes}-`;
    headers['if-range'] = state.validator as string;
  }
  const { response } = await httpRequest(
    s,
    { method: 'GET', url: spec.url, credential: spec.credential, headers },
    signal,
  );
  const status = response.statusCode;
  let append = false;
  if (status === 206 && resume && contentRangeStart(response.headers['content-range']) === state.bytes) {
    append = true;
  } else if (status === 200) {
    state.reset();
  } else {
    await discard(response);
    if (status === 206 || status === 416) {
      state.reset();
      state.resumable = false;
      throw stagingError('CE_ERR_STAGING_NETWORK', 'the server answered the resume request inconsistently', {
        transient: true,
      });
    }
    throw statusError(status, response.statusText, response.headers);
  }
  const length = numberHeader(response.headers['content-length']);
  const total = length === undefined ? undefined : (append ? state.bytes : 0) + length;
  if (spec.expectedSize !== undefined && total !== undefined && total !== spec.expectedSize) {
    await discard(response);
    throw stagingError(
      'CE_ERR_STAGING_SIZE_MISMATCH',
      `size mismatch: the server has ${total} bytes, ${spec.expectedSize} expected`,
    );
  }
  if (!append) {
    const etag = header(response.headers.etag);
    state.etag = etag;
    state.lastModified = header(response.headers['last-modified']);
    state.validator = etag !== undefined && !etag.startsWith('W/') ? etag : state.lastModified;
    state.resumable =
      header(response.headers['accept-ranges'])?.toLowerCase() === 'bytes' && state.validator !== undefined;
  }
  // Written by hand rather than with pipeline(): on a broken body, what was received is
  // flushed to disk (not discarded with the destroyed stream), so a retry can resume.
  // Socket chunks are small (~64 KiB); corking gathers them into one writev per
  // highWaterMark, a fraction of the thread-pool round trips of one write per chunk.
  const out = createWriteStream(spec.path, {
    flags: append ? 'a' : 'w',
    highWaterMark: s.highWaterMark,
    ...(spec.mode === undefined ? {} : { mode: spec.mode }),
  });
  const outFailed = new Promise<never>((_, reject) => out.once('error', reject));
  outFailed.catch(() => undefined);
  let failure: unknown;
  let batched = 0;
  out.cork();
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      state.bytes += chunk.length;
      if (spec.expectedSize !== undefined && state.bytes > spec.expectedSize) {
        throw stagingError(
          'CE_ERR_STAGING_SIZE_MISMATCH',
          `size mismatch: more than the expected ${spec.expectedSize} bytes received`,
        );
      }
      for (const h of state.hashers.values()) h.update(chunk);
      spec.onProgress?.(state.bytes);
      const room = out.write(chunk);
      batched += chunk.length;
      if (!room || batched >= s.highWaterMark) {
        out.uncork();
        batched = 0;
        if (!room) await Promise.race([once(out, 'drain'), outFailed]);
        out.cork();
      }
    }
  } catch (e) {
    failure = e;
  }
  out.uncork();
  try {
    await Promise.race([new Promise<void>((resolve) => out.end(resolve)), outFailed]);
  } catch (e) {
    failure ??= e;
    out.destroy();
  }
  if (failure !== undefined) {
    response.body.destroy();
    if (failure instanceof StagingError) throw failure;
    throw networkError(failure, signal);
  }
  if (total !== undefined && state.bytes !== total) {
    throw stagingError('CE_ERR_STAGING_NETWORK', `truncated response body (${state.bytes} of ${total} bytes)`, {
      transient: true,
    });
  }
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function numberHeader(v: string | string[] | undefined): number | undefined {
  const s = header(v);
  return s !== undefined && /^\d+$/.test(s.trim()) ? Number(s.trim()) : undefined;
}

function contentRangeStart(v: string | string[] | undefined): number | undefined {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header(v)?.trim() ?? '');
  return m === null ? undefined : Number(m[1]);
}
