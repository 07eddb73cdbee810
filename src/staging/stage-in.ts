/**
 * Stage-in, in PREPARING: inputs downloaded (http, https, WebDAV, allowed file URLs;
 * through the cache when it is on) and client uploads waited for, or looked at once
 * (`lookOnce`: the engine holds the waiting job as numbers). It stops at the first
 * permanent failure (the job fails anyway; its slots go to other jobs) and removes what
 * it had half-written; complete inputs stay for a restart.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, readdir } from 'node:fs/promises';
import type { FetchedFile } from './cache/file-cache.js';
import { linkOrCopy } from './cache/link-into.js';
import {
  checksumMatches,
  formatChecksum,
  parseChecksum,
  type ChecksumAlgorithm,
  type ExpectedChecksum,
} from './checksum.js';
import { schemeRegistry } from './gfal2/probe.js';
import { gfal2Download, gfal2Stat } from './gfal2/transfers.js';
import type { SessionOwner } from '../fs/session-owner.js';
import { checkAccess } from './http/access-check.js';
import { DownloadState, downloadAttempt } from './http/download.js';
import { copyLocalSource } from './local-source.js';
import { withRetries, type AttemptTally } from './retry.js';
import { dirPath, openDirChain, unlinkIn, type SessionRoot } from '../fs/safe-fs.js';
import { holdingSession } from './session-hold.js';
import { openWriteTarget, parseSessionName, type WriteTarget } from './session-path.js';
import { giveFile, setFileMode } from '../fs/session-owner.js';
import { stagingError } from './staging-error.js';
import { cacheMode, checksumOption, parseTransferUrl, type TransferUrl } from './transfer-url.js';
import {
  withSession,
  type FileResult,
  type ProgressListener,
  type StageInFile,
  type StageInJob,
  type StageResult,
} from './types.js';
import { waitForUserFiles, type UserFile } from './user-uploads.js';
import { errorFields, errorText, failedResult, isConsequence, stageResult, unfinishedResult } from './file-results.js';
import {
  credentialFor,
  inJobSlot,
  logFileEnd,
  transferWithRetries,
  withJobContext,
  type JobContext,
  type StagingShared,
} from './job-transfers.js';

export class StageIn {
  constructor(private readonly s: StagingShared) {}

  async run(job: StageInJob, signal: AbortSignal, progress?: ProgressListener): Promise<StageResult> {
    const failFast = new AbortController();
    const jobSignal = AbortSignal.any([signal, failFast.signal]);
    return withJobContext(this.s, job, jobSignal, progress, (ctx) => this.#run(ctx, job, signal, failFast));
  }

  async #run(ctx: JobContext, job: StageInJob, signal: AbortSignal, failFast: AbortController): Promise<StageResult> {
    // Fires on the caller's signal or on another input's failure (fail fast); `signal`
    // alone says whether the job was cancelled.
    const jobSignal = ctx.signal;
    const results: (FileResult | undefined)[] = job.files.map((_, i) => job.judged?.get(i));
    // Each remote input with its URL parsed once (here, where a bad one fails before any slot).
    const remote: { index: number; file: StageInFile; rel: string; tu: TransferUrl }[] = [];
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
          expectedChecksum(file, tu); // a malformed checksum= fails here, before any slot is taken
          if (tu.scheme === 'file' && !this.s.cfg.allowFileUrls)
            throw stagingError('CE_ERR_STAGING_FILE_URL_DENIED', 'file URLs are not allowed on this service');
          remote.push({ index, file, rel, tu });
        }
      } catch (e) {
        const text =
          file.source === undefined
            ? `User file: ${file.name} - ${errorText(e)}`
            : `Failed to download ${safeSource(file)}: ${errorText(e)}`;
        fail(index, { ...base, kind: file.source === undefined ? 'user' : 'download', ...errorFields(text, e) });
      }
    }

    // The session directory is held open for all the job's downloads while it holds its
    // slot (session-hold.ts); without it (replaced or gone), each file takes it itself.
    // Either way a lease is taken before a transfer slot, never after: a job holding its
    // lease waits for transfer slots, so one holding a transfer slot must not wait for a
    // lease (leases are bounded too: MAX_OPEN_SESSION_ROOTS).
    let root: SessionRoot | undefined;
    const downloadsDone = inJobSlot(
      this.s,
      'in',
      remote,
      jobSignal,
      async ({ index, file, rel, tu }) => {
        const held = root;
        const download = (session: string | SessionRoot): Promise<FileResult> =>
          this.s.downloads.with(() => this.#downloadInput(ctx, job, session, file, rel, tu), jobSignal);
        const r = await (held === undefined ? withSession(job, download) : download(held)).catch((e: unknown) =>
          failedResult(file.name, 'download', safeSource(file), e, 0),
        );
        if (r.ok) results[index] = r;
        else if (!isConsequence(r, jobSignal)) fail(index, r);
      },
      (run) =>
        holdingSession(job, async (r) => {
          root = r;
          try {
            await run();
          } finally {
            root = undefined;
          }
        }),
    );

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
            ? Math.max(this.s.cfg.userUploadPollSeconds, 60)
            : this.s.cfg.userUploadPollSeconds;
        lookAgainAt = await waitForUserFiles(
          user,
          {
            session: (fn) => withSession(job, fn),
            deadline: since + this.s.cfg.userUploadWaitSeconds * 1000,
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

    await Promise.all([downloadsDone, userDone]);
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
      results[index] =
        file.source === undefined
          ? unfinishedResult(file.name, 'user', undefined, cancelled ? 'cancelled' : 'skipped')
          : unfinishedResult(file.name, 'download', safeSource(file), cancelled ? 'cancelled' : 'skipped');
    }
    const done = results as FileResult[];
    if (!done.every((r) => r.ok)) await withSession(job, (dir) => removePartial(dir, done)).catch(() => undefined);
    return stageResult(done, cancelled, 'in');
  }

  async #downloadInput(
    ctx: JobContext,
    job: StageInJob,
    session: string | SessionRoot,
    file: StageInFile,
    rel: string,
    tu: TransferUrl,
  ): Promise<FileResult> {
    const tally: AttemptTally = { attempts: 0 };
    const startTime = new Date();
    let target: WriteTarget | undefined;
    let r: FileResult;
    try {
      const expected = expectedChecksum(file, tu);
      const mode = cacheMode(tu);
      const cache = this.s.cache;
      const cached =
        cache !== undefined &&
        tu.scheme !== 'file' &&
        mode !== 'no' &&
        !(file.size !== undefined && file.size > cache.maxBytes);
      // A gfal2 download is complete (its end-to-end checksum compared) before it is moved
      // out of the helper's folder, in one rename: it goes to its final name at once, unless
      // the description's checksum is still to be verified here. That rename cannot replace
      // a directory, so the name is looked at only if it fails (openWriteTarget).
      const direct = !cached && tu.scheme === 'gfal2' && expected === undefined;
      target = await openWriteTarget(session, rel, { lookFirst: !direct });
      const dest = target.path;
      const owner = target.owner;
      const onProgress = (n: number): void => ctx.progress(file.name, n);
      const fileMode = file.executable ? 0o755 : 0o644;
      let bytes: number;
      let fromCache = false;
      if (cache !== undefined && cached) {
        const lease = await cache.obtain(
          {
            key: tu.url.href,
            owner: job.owner,
            renew: mode === 'renew',
            group: [job.owner, file.delegationId ?? ctx.delegationId ?? '', file.size ?? ''].join('\n'),
            fetch: (tmp, sig) => this.#fetch(ctx, tu, file, tmp, expected, tally, sig, onProgress, 0o600, owner),
            // Redone per protocol: HEAD over HTTP, a stat through gfal2 (as the job's account).
            checkAccess: (sig) =>
              withRetries(this.s.retry, sig, { attempts: 0 }, async () => {
                const credential = await credentialFor(this.s, ctx, file.delegationId);
                if (tu.scheme !== 'gfal2') return checkAccess(ctx.http, tu.url, credential, sig);
                const seconds = this.s.cfg.timeouts.connectSeconds + this.s.cfg.timeouts.headersSeconds;
                const { helper } = await ctx.gfal2.helperFor(tu.url, owner, credential);
                return gfal2Stat(ctx.gfal2, helper, tu.url, seconds, sig);
              }),
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
        const tmp = direct ? dest : `${dest}.ceres-part-${randomBytes(4).toString('hex')}`;
        try {
          const got =
            tu.scheme === 'file'
              ? await this.#copyLocal(tu, file, tmp, expected, tally, ctx.signal, onProgress)
              : await this.#fetch(ctx, tu, file, tmp, expected, tally, ctx.signal, onProgress, fileMode, owner);
          if (expected !== undefined)
            await verifyChecksum(expected, got.checksums.get(expected.algorithm) ?? '', () => Promise.resolve());
          // A gfal2 download has its mode already (set through its descriptor, gfal2Download).
          // Through a descriptor, never by path: the session directory is the job's account's,
          // which may have swapped the file for a link to one it does not own (chmod follows it).
          if (tu.scheme === 'file' || (file.executable && tu.scheme !== 'gfal2'))
            if (!(await setFileMode(tmp, fileMode)))
              throw stagingError(
                'CE_ERR_STAGING_LOCAL_IO',
                'the file being written was replaced in the session directory',
              );
          if (!direct) await rename(tmp, dest);
          bytes = got.size;
        } catch (e) {
          // A direct download failed before its move (left nothing) or was removed after it (gfal2Download, #fetch).
          if (!direct) await rm(tmp, { force: true });
          throw direct ? await target.placementError(e) : e;
        }
      }
      // The job's own file under its local account.
      await giveFile(dest, target.owner);
      r = {
        name: file.name,
        url: tu.display,
        kind: 'download',
        ok: true,
        bytes,
        attempts: tally.attempts,
        fromCache,
        startTime,
        endTime: new Date(),
      };
    } catch (e) {
      r = failedResult(file.name, 'download', tu.display, e, tally.attempts, startTime);
    } finally {
      await target?.close();
    }
    logFileEnd(this.s, ctx, 'in', r);
    return r;
  }

  /** Download with retries into `path` (created with `mode` less the umask), resuming where the server allows. */
  async #fetch(
    ctx: JobContext,
    tu: TransferUrl,
    file: StageInFile,
    path: string,
    expected: ExpectedChecksum | undefined,
    tally: AttemptTally,
    signal: AbortSignal,
    onProgress: (n: number) => void,
    mode: number,
    owner: SessionOwner | undefined,
  ): Promise<FetchedFile> {
    // A grid protocol whose gfal2 plugin is installed: through the job's gfal2 helper, as `owner`.
    if (tu.scheme === 'gfal2') {
      const scheme = tu.url.protocol.slice(0, -1);
      if ((await schemeRegistry()).pathFor(scheme) !== 'gfal2')
        throw stagingError('CE_ERR_STAGING_BAD_URL', `Unsupported protocol '${scheme}' (no gfal2 plugin installed)`);
      const what = { verb: 'download', file: file.name, url: tu.display } as const;
      let got: { size: number; checksums: Map<ChecksumAlgorithm, string> } | undefined;
      await transferWithRetries(this.s, ctx, what, signal, tally, file.delegationId, async (credential) => {
        got = await gfal2Download(
          ctx.gfal2,
          (await ctx.gfal2.helperFor(tu.url, owner, credential)).helper,
          tu.url,
          path,
          {
            algorithms: expected === undefined ? [] : [expected.algorithm],
            onProgress,
            mode,
            ...(file.size === undefined ? {} : { expectedSize: file.size }),
          },
          signal,
        );
      });
      const done = got as { size: number; checksums: Map<ChecksumAlgorithm, string> };
      if (file.size !== undefined && done.size !== file.size) {
        await rm(path, { force: true });
        throw stagingError(
          'CE_ERR_STAGING_SIZE_MISMATCH',
          `size mismatch: ${done.size} bytes received, ${file.size} expected`,
        );
      }
      return { size: done.size, checksums: done.checksums };
    }
    const state = new DownloadState(expected === undefined ? [] : [expected.algorithm]);
    const what = { verb: 'download', file: file.name, url: tu.display } as const;
    await transferWithRetries(this.s, ctx, what, signal, tally, file.delegationId, (credential) =>
      downloadAttempt(
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
      ),
    );
    if (file.size !== undefined && state.bytes !== file.size)
      throw stagingError(
        'CE_ERR_STAGING_SIZE_MISMATCH',
        `size mismatch: ${state.bytes} bytes received, ${file.size} expected`,
      );
    return { size: state.bytes, checksums: state.digests(), etag: state.etag, lastModified: state.lastModified };
  }

  async #copyLocal(
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
        highWaterMark: this.s.cfg.highWaterMarkBytes,
        onProgress,
        ...(file.size === undefined ? {} : { expectedSize: file.size }),
      },
      signal,
    );
  }
}

/** After a failed stage-in: half-written files go (A-REX); complete inputs stay for a restart. */
async function removePartial(sessionDir: string, results: readonly FileResult[]): Promise<void> {
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

function safeSource(file: StageInFile): string {
  try {
    return parseTransferUrl(file.source ?? '').display;
  } catch {
    return `the source of ${file.name}`;
  }
}

/** What the input must hash to: the description's `size.checksum`, else the URL's `checksum=type:value`. */
function expectedChecksum(file: StageInFile, tu: TransferUrl): ExpectedChecksum | undefined {
  const text = file.checksum ?? checksumOption(tu);
  return text === undefined ? undefined : parseChecksum(text);
}
