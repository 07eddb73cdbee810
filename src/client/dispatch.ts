/**
 * One HTTPS request through an undici dispatcher, answered with its status, reason
 * phrase, headers and body. Low-level `dispatch` rather than `request`: A-REX puts its
 * error text in the HTTP reason phrase, which only the low-level handler sees. Shared by
 * the `ceres trace` client (./rest-client.ts) and the benchmark harness.
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';

export interface Answer {
  readonly status: number;
  readonly reason: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  /** Milliseconds from dispatch to the end of the body. */
  readonly ms: number;
}

export interface DispatchRequest {
  readonly origin: string;
  readonly path: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer | undefined;
  /** Count the body bytes but do not keep them (load generation). */
  readonly discardBody?: boolean;
  /** Close the connection after this request (no keep-alive). */
  readonly reset?: boolean;
  /** Aborts the request: the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** Rejects with the transport's error as is (callers classify it: ./transport-errors.ts). */
export function dispatchRequest(dispatcher: Dispatcher, o: DispatchRequest): Promise<Answer> {
  const t0 = performance.now();
  return new Promise<Answer>((resolve, reject) => {
    if (o.signal?.aborted === true) {
      reject(abortReason(o.signal));
      return;
    }
    let status = 0;
    let reason = '';
    let resHeaders: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let controller: Dispatcher.DispatchController | undefined;
    const onAbort = (): void => controller?.abort(abortReason(o.signal));
    const done = (): void => o.signal?.removeEventListener('abort', onAbort);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      // undici takes a handler for the new (controller) API only when it has onRequestStart.
      onRequestStart: (c) => {
        controller = c;
        if (o.signal?.aborted === true) c.abort(abortReason(o.signal));
      },
      onResponseStart: (_c, statusCode, h, statusMessage) => {
        status = statusCode;
        reason = statusMessage ?? '';
        resHeaders = h;
      },
      onResponseData: (_c, chunk) => {
        size += chunk.length;
        if (o.discardBody !== true) chunks.push(chunk);
      },
      onResponseEnd: () => {
        done();
        resolve({
          status,
          reason,
          headers: resHeaders,
          body:
            o.discardBody === true
              ? Buffer.alloc(0)
              : chunks.length === 1
                ? (chunks[0] as Buffer)
                : Buffer.concat(chunks, size),
          ms: performance.now() - t0,
        });
      },
      onResponseError: (_c, err) => {
        done();
        reject(err);
      },
    };
    try {
      dispatcher.dispatch(
        {
          origin: o.origin,
          path: o.path,
          method: o.method,
          headers: o.headers,
          body: o.body ?? null,
          ...(o.reset === true ? { reset: true } : {}),
        },
        handler,
      );
    } catch (e) {
      done();
      reject(e);
    }
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const r: unknown = signal?.reason;
  return r instanceof Error ? r : new Error('request aborted');
}
