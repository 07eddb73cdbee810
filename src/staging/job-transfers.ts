/**
 * What stage-in and stage-out share: the stager's limits and settings, a job's transfer
 * context (its connections, cancellation and byte count), the credential for each
 * attempt, and the retry loop with its log lines, written once for downloads and uploads.
 */
import type { StagingConfig } from '../config/sections/staging.js';
import type { FileCache } from './cache/file-cache.js';
import { credentialFingerprint, type Credential, type CredentialSource } from './credentials.js';
import { AgentSet } from './http/agents.js';
import type { Gfal2Limits } from './gfal2/limits.js';
import type { Gfal2Spares } from './gfal2/spares.js';
import { Gfal2Pool } from './gfal2/transfers.js';
import type { HttpSettings } from './http/http-request.js';
import type { StagingLogger } from './logger.js';
import { withRetries, type AttemptTally, type RetryPolicy } from './retry.js';
import type { Semaphore } from './semaphore.js';
import { errorText } from './file-results.js';
import { stagingError } from './staging-error.js';
import type { FileResult, ProgressListener } from './types.js';

export type Direction = 'in' | 'out';

/** The stager's settings and limits, as both directions use them. */
export interface StagingShared {
  readonly cfg: StagingConfig;
  readonly log: StagingLogger;
  /** The shared input cache; undefined = no caching. */
  readonly cache: FileCache | undefined;
  /** Jobs moving data at once, per direction (a job waiting for uploads holds none). */
  readonly jobSlots: Readonly<Record<Direction, Semaphore>>;
  /** File transfers at once across all jobs. */
  readonly downloads: Semaphore;
  readonly uploads: Semaphore;
  readonly retry: RetryPolicy;
  readonly credentials: CredentialSource;
  /** Extra trusted CA certificates (PEM) for https sources and targets. */
  readonly ca: readonly string[] | undefined;
  /** Per-endpoint and per-protocol limits of gfal2 transfers, shared by all jobs. */
  readonly gfal2Limits: Gfal2Limits;
  /** Warm gfal2 helpers, each bound to one job on its first gfal2 transfer. */
  readonly gfal2Spares: Gfal2Spares;
}

/** What a job's transfers share: its connections, its cancellation, its byte count. */
export interface JobContext {
  readonly jobId: string;
  readonly owner: string;
  readonly delegationId: string | undefined;
  readonly http: HttpSettings;
  readonly signal: AbortSignal;
  readonly progress: (name: string, fileBytes: number) => void;
  /** WebDAV collections that exist or are being made (uploads). */
  readonly collections: Map<string, Promise<void>>;
  /** The job's gfal2 helper processes (grid protocols), started on first use, ended with the context. */
  readonly gfal2: Gfal2Pool;
}

/**
 * Runs `fn` with a transfer context for the job: its own connection pool (closed when
 * `fn` ends, whatever the outcome) and a byte count told to `progress`.
 */
export async function withJobContext<T>(
  s: StagingShared,
  job: { id: string; owner: string; delegationId?: string },
  signal: AbortSignal,
  progress: ProgressListener | undefined,
  fn: (ctx: JobContext) => Promise<T>,
): Promise<T> {
  const agents = new AgentSet({
    connectTimeoutMs: s.cfg.timeouts.connectSeconds * 1000,
    ...(s.ca === undefined ? {} : { ca: s.ca }),
  });
  const gfal2 = new Gfal2Pool(s.cfg, s.gfal2Limits, s.gfal2Spares);
  const perFile = new Map<string, number>();
  let jobBytes = 0;
  const ctx: JobContext = {
    jobId: job.id,
    owner: job.owner,
    delegationId: job.delegationId,
    signal,
    collections: new Map(),
    gfal2,
    http: {
      agents,
      headersTimeoutMs: s.cfg.timeouts.headersSeconds * 1000,
      bodyTimeoutMs: s.cfg.timeouts.idleSeconds * 1000,
      maxRedirects: s.cfg.maxRedirects,
      highWaterMark: s.cfg.highWaterMarkBytes,
    },
    progress: (name, fileBytes) => {
      jobBytes += fileBytes - (perFile.get(name) ?? 0);
      perFile.set(name, fileBytes);
      if (progress !== undefined) {
        try {
          progress({ jobId: job.id, name, fileBytes, jobBytes });
        } catch (e) {
          s.log.error({ job: job.id, error: errorText(e) }, 'progress listener threw');
        }
      }
    },
  };
  try {
    return await fn(ctx);
  } finally {
    await Promise.all([agents.close(), gfal2.close()]);
  }
}

/** The credential as stored now (a renewed delegation is picked up on the next attempt). */
export async function credentialFor(
  s: StagingShared,
  ctx: JobContext,
  fileDelegation: string | undefined,
): Promise<Credential | undefined> {
  const id = fileDelegation ?? ctx.delegationId;
  let c: Credential | undefined;
  try {
    c = await s.credentials.credentialFor(id, ctx.owner);
  } catch (e) {
    s.log.warn({ job: ctx.jobId, delegation: id, error: errorText(e) }, 'credential lookup failed');
    c = undefined;
  }
  if (c === undefined && id !== undefined)
    throw stagingError(
      'CE_ERR_STAGING_NO_CREDENTIAL',
      `delegated credential ${safeId(id)} not found or expired; renew the delegation`,
    );
  s.log.debug({ job: ctx.jobId, credential: credentialFingerprint(c) }, 'credential for transfer');
  return c;
}

/**
 * One file's transfer with retries (retry.ts), each attempt with the credential as stored
 * then; every retry is logged ('download failed; retrying', 'upload failed; retrying').
 */
export function transferWithRetries(
  s: StagingShared,
  ctx: JobContext,
  what: { readonly verb: 'download' | 'upload'; readonly file: string; readonly url: string },
  signal: AbortSignal,
  tally: AttemptTally,
  fileDelegation: string | undefined,
  attempt: (credential: Credential | undefined) => Promise<void>,
): Promise<void> {
  return withRetries(
    s.retry,
    signal,
    tally,
    async () => attempt(await credentialFor(s, ctx, fileDelegation)),
    (n, e, delayMs) =>
      s.log.warn(
        {
          job: ctx.jobId,
          file: what.file,
          url: what.url,
          attempt: n,
          delayMs: Math.round(delayMs),
          error: errorText(e),
        },
        `${what.verb} failed; retrying`,
      ),
  );
}

/**
 * The log line of one file's end: staged (info), or failed (warn) unless the job's
 * transfers were cancelled (the cancellation is the news, not each file cut short).
 */
export function logFileEnd(s: StagingShared, ctx: JobContext, direction: Direction, r: FileResult): void {
  const what = direction === 'in' ? 'input' : 'output';
  if (r.ok) {
    s.log.info(
      {
        job: ctx.jobId,
        file: r.name,
        url: r.url,
        bytes: r.bytes,
        attempts: r.attempts,
        ...(direction === 'in' ? { fromCache: r.fromCache === true } : {}),
        ms: (r.endTime?.getTime() ?? 0) - (r.startTime?.getTime() ?? 0),
      },
      `${what} staged`,
    );
  } else if (!ctx.signal.aborted) {
    s.log.warn(
      { job: ctx.jobId, file: r.name, url: r.url, attempts: r.attempts, code: r.code, error: r.error },
      `${what} staging failed`,
    );
  }
}

function safeId(id: string): string {
  return /^[A-Za-z0-9._-]{1,128}$/.test(id) ? id : '(invalid id)';
}

/**
 * Runs `fn` over a job's files holding one of the direction's job slots, at most
 * `maxTransfersPerJob` at once; stops starting new ones once the signal fires. Nothing
 * runs if there is nothing to move or the signal fires before a slot is free. `around`
 * wraps the whole run inside the slot (stage-in holds the session directory open there).
 */
export async function inJobSlot<T>(
  s: StagingShared,
  direction: Direction,
  items: readonly T[],
  signal: AbortSignal,
  fn: (item: T) => Promise<void>,
  around: (run: () => Promise<void>) => Promise<void> = (run) => run(),
): Promise<void> {
  if (items.length === 0 || signal.aborted) return;
  const release = await s.jobSlots[direction].acquire(signal).catch(() => undefined);
  if (release === undefined) return;
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length && !signal.aborted) {
        const item = items[next++] as T;
        await fn(item);
      }
    };
    await around(async () => {
      await Promise.all(Array.from({ length: Math.min(s.cfg.maxTransfersPerJob, items.length) }, worker));
    });
  } finally {
    release();
  }
}
