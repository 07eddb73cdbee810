/**
 * The staging adapter the job engine calls: stage-in in PREPARING, stage-out in
 * FINISHING. It never throws for a transfer failure: it answers with per-file
 * results, a reason a user can act on, and the lines for the job's control files.
 *
 * Limits (observable, so the engine can keep jobs waiting visibly):
 *   jobs staging in / out at once (a job holds its slot only while it moves data, not
 *   while it waits for the client's uploads), file transfers across all jobs, and
 *   transfers per job.
 * Stage-in stops at the first permanent failure (the job fails anyway; its slots go
 * to other jobs) and removes what it had half-written. Stage-out tries every output.
 */
import { randomBytes } from 'node:crypto';
import { chmod, rename, rm, readdir } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { StagingConfig } from '../config/sections/staging.js';
import type { ErrorCode } from '../errors/catalog.js';
import { isCeError } from '../errors/ce-error.js';
import type { FileCache, CacheStats, FetchedFile } from './cache/file-cache.js';
import { linkOrCopy } from './cache/link-into.js';
import { checksumMatches, formatChecksum, parseChecksum, type ExpectedChecksum } from './checksum.js';
import { inputStatusLine, outputStatusLine, statisticsLine } from './control-lines.js';
import { credentialFingerprint, type Credential, type CredentialSource } from './credentials.js';
import { expandDynamicOutputs } from './dynamic-outputs.js';
import { checkAccess } from './http/access-check.js';
import { AgentSet } from './http/agents.js';
import { DownloadState, downloadAttempt } from './http/download.js';
import type { HttpSettings } from './http/http-request.js';
import { uploadAttempt } from './http/upload.js';
import { copyLocalSource } from './local-source.js';
import { silentLogger, type StagingLogger } from './logger.js';
import { withRetries, type AttemptTally, type RetryPolicy } from './retry.js';
import { Semaphore } from './semaphore.js';
import { pruneSession, removeOutput } from './session-prune.js';
import { dirPath, openDirChain, unlinkIn } from '../fs/safe-fs.js';
import {
  listSessionTree,
  openSessionFile,
  openWriteTarget,
  parseSessionName,
  type WriteTarget,
} from './session-path.js';
import { giveFile } from '../fs/session-owner.js';
import { StagingError, stagingError } from './staging-error.js';
import { cacheMode, overwriteAllowed, parseTransferUrl, type TransferUrl } from './transfer-url.js';
import {
  withSession,
  type FileResult,
  type ProgressListener,
  type StageInFile,
  type StageInJob,
  type StageOutFile,
  type StageOutJob,
  type StageResult,
} from './types.js';
import { waitForUserFiles, type UserFile } from './user-uploads.js';

export interface StagerOptions {
  readonly config: StagingConfig;
  readonly credentials: CredentialSource;
  /** The shared input cache; absent (or `config.cache.enabled` false) = no caching. */
  readonly cache?: FileCache;
  readonly logger?: StagingLogger;
  /** Extra trusted CA certificates (PEM) for https sources and targets, added to Node's roots. */
  readonly ca?: readonly string[];
  /** Random source for retry jitter (tests). */
  readonly random?: () => number;
}

export type Direction = 'in' | 'out';

export interface SlotStats {
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
}

export interface StagerStats {
  /** Jobs staging in (holding a slot) and waiting for one. */
  readonly in: SlotStats;
  readonly out: SlotStats;
  readonly downloads: SlotStats;
  readonly uploads: SlotStats;
  readonly cache?: CacheStats;
}

/** What a job's transfers share: its connections, its cancellation, its byte count. */
interface JobContext {
  readonly jobId: string;
  readonly owner: string;
  readonly delegationId: string | undefined;
  readonly http: HttpSettings;
  readonly signal: AbortSignal;
  readonly progress: (name: string, fileBytes: number) => void;
  /** WebDAV collections that exist or are being made (uploads). */
  readonly collections: Map<string, Promise<void>>;
}

export class Stager {
  private readonly cfg: StagingConfig;
  private readonly log: StagingLogger;
  private readonly cache: FileCache | undefined;
  private readonly jobSlots: Readonly<Record<Direction, Semaphore>>;
  private readonly downloads: Semaphore;
  private readonly uploads: Semaphore;
  private readonly retry: RetryPolicy;

  constructor(private readonly opts: StagerOptions) {
    this.cfg = opts.config;
    this.log = opts.logger ?? silentLogger;
    this.cache = opts.config.cache.enabled ? opts.cache : undefined;
    this.jobSlots = { in: new Semaphore(this.cfg.maxJobsStagingIn), out: new Semaphore(this.cfg.maxJobsStagingOut) };
    this.downloads = new Semaphore(this.cfg.maxDownloads);
    this.uploads = new Semaphore(this.cfg.maxUploads);
    const r = this.cfg.retry;
    this.retry = {
      maxAttempts: r.maxAttempts,
      initialDelayMs: r.initialDelaySeconds * 1000,
      maxDelayMs: r.maxDelaySeconds * 1000,
      multiplier: r.multiplier,
      ...(opts.random === undefined ? {} : { random: opts.random }),
    };
  }

  /** A job could start moving data now (a slot is free and nobody waits before it). */
  canStart(direction: Direction): boolean {
    return this.jobSlots[direction].available();
  }

  stats(): StagerStats {
    const s = (x: Semaphore): SlotStats => ({ active: x.active, queued: x.queued, limit: x.limit });
    return {
      in: s(this.jobSlots.in),
      out: s(this.jobSlots.out),
      downloads: s(this.downloads),
      uploads: s(this.uploads),
      ...(this.cache === undefined ? {} : { cache: this.cache.stats() }),
    };
  }

  // ================================================================ stage-in

  async stageIn(job: StageInJob, signal: AbortSignal, progress?: ProgressListener): Promise<StageResult> {
    const results: (FileResult | undefined)[] = job.files.map((_, i) => job.judged?.get(i));
    const failFast = new AbortController();
    const jobSignal = AbortSignal.any([signal, failFast.signal]);
    const agents = this.agents();
    const ctx = this.context(job, agents, jobSignal, progress);
    const remote: { index: number; file: StageInFile; rel: string }[] = [];
    const user: UserFile[] = [];
    const fail = (index: number, r: FileResult): void => {
      results[index] = r;
      failFast.abort(stagingError('CE_ERR_STAGING_SKIPPED', 'not completed because another input failed'));
    };

    // Descriptions are checked before any slot is taken: a bad name or URL fails at once.
    for (const [index, file] of job.files.entries()) {
      if (results[index] !== undefined) continue; // judged by an earlier look
      const base = { name: file.name, attempts: 0, bytes: 0, ok: false } as const;
      try {
        const { rel } = parseSessionName(file.name);
        if (rel === '') throw stagingError('CE_ERR_STAGING_BAD_NAME', `'${file.name}' is not a file name`);
        const checksum = file.checksum === undefined ? undefined : parseChecksum(file.checksum);
        if (file.source === undefined) {
          user.push({
            index,
            rel,
            executable: file.executable,
            ...(file.size === undefined ? {} : { size: file.size }),
            ...(checksum === undefined ? {} : { checksum }),
          });
        } else {
          const tu = parseTransferUrl(file.source, file.options);
          if (tu.scheme === 'file' && !this.cfg.allowFileUrls)
            throw stagingError('CE_ERR_STAGING_FILE_URL_DENIED', 'file URLs are not allowed on this service');
          remote.push({ index, file, rel });
        }
      } catch (e) {
        const text =
          file.source === undefined
            ? `User file: ${file.name} - ${errorText(e)}`
            : `Failed to download ${safeSource(file)}: ${errorText(e)}`;
        fail(index, { ...base, kind: file.source === undefined ? 'user' : 'download', ...errorFields(text, e) });
      }
    }

    const downloadsDone = (async () => {
      if (remote.length === 0 || jobSignal.aborted) return;
      const release = await this.jobSlots.in.acquire(jobSignal).catch(() => undefined);
      if (release === undefined) return;
      try {
        await runLimited(remote, this.cfg.maxTransfersPerJob, jobSignal, async ({ index, file, rel }) => {
          const r = await this.downloads
            .with(() => withSession(job, (dir) => this.downloadInput(ctx, job, dir, file, rel)), jobSignal)
            .catch((e: unknown) => failedResult(file.name, 'download', safeSource(file), e, 0));
          if (r.ok) results[index] = r;
          else if (!isConsequence(r, jobSignal)) fail(index, r);
        });
      } finally {
        release();
      }
    })();

    const once = job.lookOnce === true && remote.length === 0;
    let lookAgainAt: number | undefined;
    const userDone = (async () => {
      if (user.length === 0) return;
      const since = job.preparingSince?.getTime() ?? Date.now();
      try {
        // With upload events the poll is only a backstop: keep it rare, or thousands of
        // jobs waiting for uploads keep the service busy re-reading control files.
        const pollSeconds =
          job.uploads?.changed !== undefined || once
            ? Math.max(this.cfg.userUploadPollSeconds, 60)
            : this.cfg.userUploadPollSeconds;
        lookAgainAt = await waitForUserFiles(
          user,
          {
            session: (fn) => withSession(job, fn),
            deadline: since + this.cfg.userUploadWaitSeconds * 1000,
            pollMs: pollSeconds * 1000,
            once,
            ...(job.uploads === undefined ? {} : { uploads: job.uploads }),
          },
          jobSignal,
          (f, outcome) => {
            const name = job.files[f.index]?.name ?? f.rel;
            if (outcome.ok) results[f.index] = { name, kind: 'user', ok: true, bytes: outcome.bytes, attempts: 0 };
            else
              fail(f.index, {
                name,
                kind: 'user',
                ok: false,
                bytes: 0,
                attempts: 0,
                ...errorFields(outcome.error.message, outcome.error),
              });
          },
        );
      } catch {
        // aborted: the files still pending are reported below
      }
    })();

    try {
      await Promise.all([downloadsDone, userDone]);
    } finally {
      await agents.close();
    }
    if (lookAgainAt !== undefined && !jobSignal.aborted) {
      const judged = new Map<number, FileResult>();
      for (const [i, r] of results.entries()) if (r !== undefined) judged.set(i, r);
      const none = { inputStatus: [], outputStatus: [], statistics: [] };
      return {
        ok: false,
        cancelled: false,
        files: [],
        failures: [],
        control: none,
        bytes: 0,
        waiting: { checkAt: lookAgainAt, judged },
      };
    }

    // Whatever has no result was cut short: by the caller's signal or by another file's failure.
    const cancelled = signal.aborted;
    for (const [index, file] of job.files.entries()) {
      if (results[index] !== undefined) continue;
      const why = cancelled
        ? stagingError('CE_ERR_STAGING_CANCELLED', 'Data staging cancelled')
        : stagingError('CE_ERR_STAGING_SKIPPED', 'not completed because another input failed');
      results[index] = {
        name: file.name,
        kind: file.source === undefined ? 'user' : 'download',
        ok: false,
        bytes: 0,
        attempts: 0,
        ...(file.source === undefined ? {} : { url: safeSource(file) }),
        ...errorFields(`${file.name}: ${why.message}`, why),
      };
    }
    const done = results as FileResult[];
    if (!done.every((r) => r.ok)) await withSession(job, (dir) => this.removePartial(dir, done)).catch(() => undefined);
    return this.result(done, cancelled, 'in');
  }

  private async downloadInput(
    ctx: JobContext,
    job: StageInJob,
    sessionDir: string,
    file: StageInFile,
    rel: string,
  ): Promise<FileResult> {
    const tu = parseTransferUrl(file.source as string, file.options);
    const tally: AttemptTally = { attempts: 0 };
    const startTime = new Date();
    let target: WriteTarget | undefined;
    try {
      const expected = file.checksum === undefined ? undefined : parseChecksum(file.checksum);
      target = await openWriteTarget(sessionDir, rel);
      const dest = target.path;
      const onProgress = (n: number): void => ctx.progress(file.name, n);
      const mode = cacheMode(tu);
      const cache = this.cache;
      const fileMode = file.executable ? 0o755 : 0o644;
      let bytes: number;
      let fromCache = false;
      if (
        cache !== undefined &&
        tu.scheme !== 'file' &&
        mode !== 'no' &&
        !(file.size !== undefined && file.size > cache.maxBytes)
      ) {
        const lease = await cache.obtain(
          {
            key: tu.url.href,
            owner: job.owner,
            renew: mode === 'renew',
            group: [job.owner, file.delegationId ?? ctx.delegationId ?? '', file.size ?? ''].join('\n'),
            fetch: (tmp, sig) => this.fetch(ctx, tu, file, tmp, expected, tally, sig, onProgress, 0o600),
            checkAccess: (sig) =>
              withRetries(this.retry, sig, { attempts: 0 }, async () =>
                checkAccess(ctx.http, tu.url, await this.credential(ctx, file.delegationId), sig),
              ),
          },
          ctx.signal,
        );
        try {
          if (file.size !== undefined && lease.size !== file.size) {
            await lease.invalidate();
            throw stagingError(
              'CE_ERR_STAGING_SIZE_MISMATCH',
              `size mismatch: ${lease.size} bytes, ${file.size} expected`,
            );
          }
          if (expected !== undefined)
            await verifyChecksum(expected, await lease.checksum(expected.algorithm), () => lease.invalidate());
          // Under a local account the input is a copy of its own: a link would share the
          // cache file (the service's, 0600) with the job (docs/security.md).
          await linkOrCopy(lease.path, dest, {
            copy: mode === 'copy' || file.executable || target.owner !== undefined,
            mode: fileMode,
          });
          bytes = lease.size;
          fromCache = lease.fromCache;
          if (fromCache) onProgress(bytes);
        } finally {
          lease.release();
        }
      } else {
        const tmp = `${dest}.ceres-part-${randomBytes(4).toString('hex')}`;
        try {
          const got =
            tu.scheme === 'file'
              ? await this.copyLocal(tu, file, tmp, expected, tally, ctx.signal, onProgress)
              : await this.fetch(ctx, tu, file, tmp, expected, tally, ctx.signal, onProgress, fileMode);
          if (expected !== undefined)
            await verifyChecksum(expected, got.checksums.get(expected.algorithm) ?? '', () => Promise.resolve());
          if (tu.scheme === 'file' || file.executable) await chmod(tmp, fileMode);
          await rename(tmp, dest);
          bytes = got.size;
        } catch (e) {
          await rm(tmp, { force: true });
          throw e;
        }
      }
      // The job's own file under its local account.
      await giveFile(dest, target.owner);
      const endTime = new Date();
      this.log.info(
        {
          job: ctx.jobId,
          file: file.name,
          url: tu.display,
          bytes,
          attempts: tally.attempts,
          fromCache,
          ms: endTime.getTime() - startTime.getTime(),
        },
        'input staged',
      );
      return {
        name: file.name,
        url: tu.display,
        kind: 'download',
        ok: true,
        bytes,
        attempts: tally.attempts,
        fromCache,
        startTime,
        endTime,
      };
    } catch (e) {
      const r = failedResult(file.name, 'download', tu.display, e, tally.attempts, startTime);
      if (!ctx.signal.aborted)
        this.log.warn(
          { job: ctx.jobId, file: file.name, url: tu.display, attempts: tally.attempts, code: r.code, error: r.error },
          'input staging failed',
        );
      return r;
    } finally {
      await target?.close();
    }
  }

  /** Download with retries into `path` (created with `mode` less the umask), resuming where the server allows. */
  private async fetch(
    ctx: JobContext,
    tu: TransferUrl,
    file: StageInFile,
    path: string,
    expected: ExpectedChecksum | undefined,
    tally: AttemptTally,
    signal: AbortSignal,
    onProgress: (n: number) => void,
    mode: number,
  ): Promise<FetchedFile> {
    const state = new DownloadState(expected === undefined ? [] : [expected.algorithm]);
    await withRetries(
      this.retry,
      signal,
      tally,
      async () => {
        const credential = await this.credential(ctx, file.delegationId);
        await downloadAttempt(
          ctx.http,
          {
            url: tu.url,
            credential,
            path,
            mode,
            algorithms: expected === undefined ? [] : [expected.algorithm],
            onProgress,
            ...(file.size === undefined ? {} : { expectedSize: file.size }),
          },
          state,
          signal,
        );
      },
      (attempt, e, delayMs) =>
        this.log.warn(
          {
            job: ctx.jobId,
            file: file.name,
            url: tu.display,
            attempt,
            delayMs: Math.round(delayMs),
            error: errorText(e),
          },
          'download failed; retrying',
        ),
    );
    if (file.size !== undefined && state.bytes !== file.size)
      throw stagingError(
        'CE_ERR_STAGING_SIZE_MISMATCH',
        `size mismatch: ${state.bytes} bytes received, ${file.size} expected`,
      );
    return { size: state.bytes, checksums: state.digests(), etag: state.etag, lastModified: state.lastModified };
  }

  private async copyLocal(
    tu: TransferUrl,
    file: StageInFile,
    tmp: string,
    expected: ExpectedChecksum | undefined,
    tally: AttemptTally,
    signal: AbortSignal,
    onProgress: (n: number) => void,
  ): Promise<FetchedFile> {
    tally.attempts++;
    return copyLocalSource(
      tu.url,
      tmp,
      {
        algorithms: expected === undefined ? [] : [expected.algorithm],
        highWaterMark: this.cfg.highWaterMarkBytes,
        onProgress,
        ...(file.size === undefined ? {} : { expectedSize: file.size }),
      },
      signal,
    );
  }

  /** After a failed stage-in: half-written files go (A-REX); complete inputs stay for a restart. */
  private async removePartial(sessionDir: string, results: readonly FileResult[]): Promise<void> {
    const dirs = new Set<string>();
    for (const r of results) {
      if (r.kind !== 'download') continue;
      try {
        const rel = parseSessionName(r.name).rel;
        const slash = rel.lastIndexOf('/');
        dirs.add(slash < 0 ? '' : rel.slice(0, slash));
      } catch {
        // invalid name: nothing was written
      }
    }
    for (const d of dirs) {
      // Through a descriptor: a directory swapped for a link is not entered.
      const dir = await openDirChain(sessionDir, d === '' ? [] : d.split('/')).catch(() => undefined);
      if (dir === undefined) continue;
      try {
        for (const n of await readdir(dirPath(dir)).catch(() => [] as string[])) {
          if (/\.ceres-(part-)?[0-9a-f]{8}$/.test(n)) await unlinkIn(dir, n).catch(() => undefined);
        }
      } finally {
        await dir.close();
      }
    }
  }

  // ================================================================ stage-out

  async stageOut(job: StageOutJob, signal: AbortSignal, progress?: ProgressListener): Promise<StageResult> {
    const results: FileResult[] = [];
    const outputs = await withSession(job, async (dir): Promise<StageOutFile[]> => {
      let expanded: StageOutFile[];
      try {
        expanded = await expandDynamicOutputs(dir, job.files);
      } catch (e) {
        expanded = job.files.filter((f) => !f.name.startsWith('@'));
        this.log.warn({ job: job.id, error: errorText(e) }, 'dynamic output list unreadable');
      }
      // Pruning first, as A-REX: outputs still to upload and outputs for the client stay.
      await pruneSession(dir, expanded);
      return expanded;
    }).catch((e: unknown) => {
      // The session directory is no longer the job's (replaced meanwhile): nothing is
      // pruned; the uploads below fail on their own leases with the reason.
      this.log.warn({ job: job.id, error: errorText(e) }, 'session directory not pruned');
      return job.files.filter((f) => !f.name.startsWith('@'));
    });

    const uploads: { file: StageOutFile; rel: string; tree: boolean }[] = [];
    for (const file of outputs) {
      if (file.target === undefined || !file.when[job.outcome]) {
        continue; // kept for the client (no target, or a target not used for this outcome)
      }
      try {
        const { rel, dir } = parseSessionName(file.name);
        if (rel === '')
          throw stagingError(
            'CE_ERR_STAGING_BAD_NAME',
            "the whole session directory ('/') cannot be uploaded to one URL",
          );
        uploads.push({ file, rel, tree: dir });
      } catch (e) {
        results.push(failedResult(file.name, 'upload', safeTarget(file), e, 0, undefined, 'upload'));
      }
    }

    const agents = this.agents();
    const ctx = this.context(job, agents, signal, progress);
    try {
      if (uploads.length > 0 && !signal.aborted) {
        const release = await this.jobSlots.out.acquire(signal).catch(() => undefined);
        if (release !== undefined) {
          try {
            await runLimited(uploads, this.cfg.maxTransfersPerJob, signal, async (u) => {
              const r = await this.uploads
                .with(() => withSession(job, (dir) => this.uploadOutput(ctx, job, dir, u.file, u.rel, u.tree)), signal)
                .catch((e: unknown) =>
                  failedResult(u.file.name, 'upload', safeTarget(u.file), e, 0, undefined, 'upload'),
                );
              if (r.ok || !isConsequence(r, signal)) results.push(r);
            });
          } finally {
            release();
          }
        }
      }
    } finally {
      await agents.close();
    }
    const cancelled = signal.aborted;
    for (const u of uploads) {
      if (results.some((r) => r.name === u.file.name && r.url === safeTarget(u.file))) continue;
      const why = stagingError('CE_ERR_STAGING_CANCELLED', 'Data staging cancelled');
      results.push({
        name: u.file.name,
        url: safeTarget(u.file),
        kind: 'upload',
        ok: false,
        bytes: 0,
        attempts: 0,
        ...errorFields(`${u.file.name}: ${why.message}`, why),
      });
    }
    for (const file of outputs) {
      if (file.target === undefined || !file.when[job.outcome])
        results.push({ name: file.name, kind: 'kept', ok: true, bytes: 0, attempts: 0 });
    }
    return this.result(results, cancelled, 'out');
  }

  private async uploadOutput(
    ctx: JobContext,
    job: StageOutJob,
    sessionDir: string,
    file: StageOutFile,
    rel: string,
    tree: boolean,
  ): Promise<FileResult> {
    const tu = parseTransferUrl(file.target as string, file.options);
    const tally: AttemptTally = { attempts: 0 };
    const startTime = new Date();
    try {
      if (tu.scheme === 'file') throw stagingError('CE_ERR_STAGING_BAD_URL', 'file URLs cannot be upload targets');
      const files = tree ? await listTree(sessionDir, rel) : [{ rel, sub: '' }];
      let bytes = 0;
      for (const f of files) {
        const url = new URL(tu.url.href);
        if (f.sub !== '')
          url.pathname = `${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}${f.sub.split('/').map(encodeURIComponent).join('/')}`;
        bytes += await this.uploadOne(ctx, sessionDir, file, tu, url, f.rel, tally);
      }
      if (this.cfg.removeUploadedOutputs) await removeOutput(sessionDir, rel, tree);
      const endTime = new Date();
      this.log.info(
        {
          job: ctx.jobId,
          file: file.name,
          url: tu.display,
          bytes,
          attempts: tally.attempts,
          ms: endTime.getTime() - startTime.getTime(),
        },
        'output staged',
      );
      return {
        name: file.name,
        url: tu.display,
        kind: 'upload',
        ok: true,
        bytes,
        attempts: tally.attempts,
        startTime,
        endTime,
      };
    } catch (e) {
      const r = failedResult(file.name, 'upload', tu.display, e, tally.attempts, startTime, 'upload');
      if (!ctx.signal.aborted)
        this.log.warn(
          { job: ctx.jobId, file: file.name, url: tu.display, attempts: tally.attempts, code: r.code, error: r.error },
          'output staging failed',
        );
      return r;
    }
  }

  private async uploadOne(
    ctx: JobContext,
    sessionDir: string,
    file: StageOutFile,
    tu: TransferUrl,
    url: URL,
    rel: string,
    tally: AttemptTally,
  ): Promise<number> {
    // Opened (without following links) once to learn the size, then again for every PUT sent.
    const open = async (): Promise<{ stream: Readable; size: number }> => {
      const { handle, size } = await openSessionFile(sessionDir, rel);
      return { stream: handle.createReadStream({ highWaterMark: this.cfg.highWaterMarkBytes }), size };
    };
    const first = await open();
    first.stream.destroy();
    const size = first.size;
    await withRetries(
      this.retry,
      ctx.signal,
      tally,
      async () => {
        const credential = await this.credential(ctx, file.delegationId);
        await uploadAttempt(
          ctx.http,
          {
            url,
            credential,
            size,
            open: async () => (await open()).stream,
            overwrite: overwriteAllowed(tu),
            webdav: tu.webdav,
            collections: ctx.collections,
            verify: this.cfg.verifyUploads,
            onProgress: (n) => ctx.progress(file.name, n),
          },
          ctx.signal,
        );
      },
      (attempt, e, delayMs) =>
        this.log.warn(
          {
            job: ctx.jobId,
            file: file.name,
            url: tu.display,
            attempt,
            delayMs: Math.round(delayMs),
            error: errorText(e),
          },
          'upload failed; retrying',
        ),
    );
    return size;
  }

  // ================================================================ shared

  private agents(): AgentSet {
    return new AgentSet({
      connectTimeoutMs: this.cfg.timeouts.connectSeconds * 1000,
      ...(this.opts.ca === undefined ? {} : { ca: this.opts.ca }),
    });
  }

  private context(
    job: { id: string; owner: string; delegationId?: string },
    agents: AgentSet,
    signal: AbortSignal,
    progress: ProgressListener | undefined,
  ): JobContext {
    const perFile = new Map<string, number>();
    let jobBytes = 0;
    return {
      jobId: job.id,
      owner: job.owner,
      delegationId: job.delegationId,
      signal,
      collections: new Map(),
      http: {
        agents,
        headersTimeoutMs: this.cfg.timeouts.headersSeconds * 1000,
        bodyTimeoutMs: this.cfg.timeouts.idleSeconds * 1000,
        maxRedirects: this.cfg.maxRedirects,
        highWaterMark: this.cfg.highWaterMarkBytes,
      },
      progress: (name, fileBytes) => {
        jobBytes += fileBytes - (perFile.get(name) ?? 0);
        perFile.set(name, fileBytes);
        if (progress !== undefined) {
          try {
            progress({ jobId: job.id, name, fileBytes, jobBytes });
          } catch (e) {
            this.log.error({ job: job.id, error: errorText(e) }, 'progress listener threw');
          }
        }
      },
    };
  }

  /** The credential as stored now (a renewed delegation is picked up on the next attempt). */
  private async credential(ctx: JobContext, fileDelegation: string | undefined): Promise<Credential | undefined> {
    const id = fileDelegation ?? ctx.delegationId;
    let c: Credential | undefined;
    try {
      c = await this.opts.credentials.credentialFor(id, ctx.owner);
    } catch (e) {
      this.log.warn({ job: ctx.jobId, delegation: id, error: errorText(e) }, 'credential lookup failed');
      c = undefined;
    }
    if (c === undefined && id !== undefined)
      throw stagingError(
        'CE_ERR_STAGING_NO_CREDENTIAL',
        `delegated credential ${safeId(id)} not found or expired; renew the delegation`,
      );
    this.log.debug({ job: ctx.jobId, credential: credentialFingerprint(c) }, 'credential for transfer');
    return c;
  }

  private result(files: readonly FileResult[], cancelled: boolean, direction: Direction): StageResult {
    // The failure that caused the others comes first; skipped/cancelled ones only if nothing else failed.
    const failed = files.filter((f) => !f.ok);
    const primary = failed.filter((f) => f.code !== 'CE_ERR_STAGING_SKIPPED' && f.code !== 'CE_ERR_STAGING_CANCELLED');
    const failures = (primary.length > 0 ? primary : failed).map((f) => f.error ?? `${f.name}: failed`);
    const inputStatus: string[] = [];
    const outputStatus: string[] = [];
    const statistics: string[] = [];
    for (const f of files) {
      if (!f.ok || f.startTime === undefined || f.endTime === undefined || f.url === undefined) continue;
      const rel = parseSessionName(f.name).rel;
      if (direction === 'in') {
        inputStatus.push(inputStatusLine(rel));
        statistics.push(statisticsLine('inputfile', f.url, f.bytes, f.startTime, f.endTime, f.fromCache === true));
      } else {
        outputStatus.push(outputStatusLine(rel, f.url));
        statistics.push(statisticsLine('outputfile', f.url, f.bytes, f.startTime, f.endTime));
      }
    }
    return {
      ok: failed.length === 0 && !cancelled,
      cancelled,
      files,
      ...(failures[0] === undefined
        ? cancelled
          ? { failureReason: 'Data staging cancelled' }
          : {}
        : { failureReason: failures[0] }),
      failures,
      control: { inputStatus, outputStatus, statistics },
      bytes: files.reduce((n, f) => n + (f.ok && f.kind !== 'kept' ? f.bytes : 0), 0),
    };
  }
}

// ---------------------------------------------------------------- helpers

/** A failure that only reflects the job's cancellation or another file's failure (reported as such later). */
function isConsequence(r: FileResult, signal: AbortSignal): boolean {
  return (
    signal.aborted &&
    (r.code === undefined || r.code === 'CE_ERR_STAGING_CANCELLED' || r.code === 'CE_ERR_STAGING_SKIPPED')
  );
}

async function verifyChecksum(
  expected: ExpectedChecksum,
  digest: string,
  onMismatch: () => Promise<void>,
): Promise<void> {
  if (checksumMatches(expected, digest)) return;
  await onMismatch();
  throw stagingError(
    'CE_ERR_STAGING_CHECKSUM_MISMATCH',
    `checksum mismatch: ${formatChecksum(expected.algorithm, digest)}, ${expected.algorithm}:${expected.value} expected`,
  );
}

/** Run `fn` over items with at most `limit` in flight; stops starting new ones once the signal fires. */
async function runLimited<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function listTree(sessionDir: string, rel: string): Promise<{ rel: string; sub: string }[]> {
  const files = await listSessionTree(sessionDir, rel);
  return files.map((sub) => ({ rel: `${rel}/${sub}`, sub })).sort((a, b) => a.sub.localeCompare(b.sub));
}

function failedResult(
  name: string,
  kind: 'download' | 'upload',
  url: string | undefined,
  e: unknown,
  attempts: number,
  startTime?: Date,
  verb: 'download' | 'upload' = 'download',
): FileResult {
  const text =
    isCeError(e) && (e.code === 'CE_ERR_STAGING_SKIPPED' || e.code === 'CE_ERR_STAGING_CANCELLED')
      ? `${name}: ${e.message}`
      : verb === 'download'
        ? `Failed to download ${url ?? name}: ${errorText(e)}`
        : `Failed to upload ${name} to ${url ?? '?'}: ${errorText(e)}`;
  return {
    name,
    kind,
    ok: false,
    bytes: 0,
    attempts,
    ...(url === undefined ? {} : { url }),
    ...(startTime === undefined ? {} : { startTime, endTime: new Date() }),
    ...errorFields(text, e),
  };
}

function errorFields(text: string, e: unknown): { error: string; code?: ErrorCode } {
  return { error: text, ...(isCeError(e) ? { code: e.code } : {}) };
}

/** A message safe for users: ours as they are; anything else (a bug) reduced to its kind. */
function errorText(e: unknown): string {
  if (e instanceof StagingError || isCeError(e)) return e.message;
  if ((e as { name?: string } | null)?.name === 'AbortError') return 'cancelled';
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? `local error (${code})` : 'internal error';
}

function safeSource(file: StageInFile): string {
  try {
    return parseTransferUrl(file.source ?? '').display;
  } catch {
    return `the source of ${file.name}`;
  }
}

function safeTarget(file: StageOutFile): string {
  try {
    return parseTransferUrl(file.target ?? '').display;
  } catch {
    return `the target of ${file.name}`;
  }
}

function safeId(id: string): string {
  return /^[A-Za-z0-9._-]{1,128}$/.test(id) ? id : '(invalid id)';
}
