/**
 * Stage-out, in FINISHING: the session is pruned to what is kept (A-REX: outputs still to
 * upload and outputs for the client stay), then every output with a target used on this
 * outcome is uploaded (http, https, WebDAV; a directory as a tree). Unlike stage-in it
 * tries every output: one failed upload does not stop the others.
 */
import type { Readable } from 'node:stream';
import { expandDynamicOutputs } from './dynamic-outputs.js';
import { uploadAttempt } from './http/upload.js';
import { stat } from 'node:fs/promises';
import { ownerToGive } from '../fs/session-owner.js';
import { schemeRegistry } from './gfal2/probe.js';
import { gfal2Upload } from './gfal2/transfers.js';
import type { AttemptTally } from './retry.js';
import { pruneSession, removeOutput } from './session-prune.js';
import { listSessionTree, openSessionFile, parseSessionName } from './session-path.js';
import { stagingError } from './staging-error.js';
import { overwriteAllowed, parseTransferUrl, type TransferUrl } from './transfer-url.js';
import {
  withSession,
  type FileResult,
  type ProgressListener,
  type StageOutFile,
  type StageOutJob,
  type StageResult,
} from './types.js';
import { errorText, failedResult, isConsequence, stageResult, unfinishedResult } from './file-results.js';
import {
  inJobSlot,
  logFileEnd,
  transferWithRetries,
  withJobContext,
  type JobContext,
  type StagingShared,
} from './job-transfers.js';

export class StageOut {
  constructor(private readonly s: StagingShared) {}

  async run(job: StageOutJob, signal: AbortSignal, progress?: ProgressListener): Promise<StageResult> {
    const results: FileResult[] = [];
    const outputs = await withSession(job, async (dir): Promise<StageOutFile[]> => {
      let expanded: StageOutFile[];
      try {
        expanded = await expandDynamicOutputs(dir, job.files);
      } catch (e) {
        expanded = job.files.filter((f) => !f.name.startsWith('@'));
        this.s.log.warn({ job: job.id, error: errorText(e) }, 'dynamic output list unreadable');
      }
      // Pruning first, as A-REX: outputs still to upload and outputs for the client stay.
      await pruneSession(dir, expanded);
      return expanded;
    }).catch((e: unknown) => {
      // The session directory is no longer the job's (replaced meanwhile): nothing is
      // pruned; the uploads below fail on their own leases with the reason.
      this.s.log.warn({ job: job.id, error: errorText(e) }, 'session directory not pruned');
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

    await withJobContext(this.s, job, signal, progress, (ctx) =>
      inJobSlot(this.s, 'out', uploads, signal, async (u) => {
        const r = await this.s.uploads
          .with(() => withSession(job, (dir) => this.#uploadOutput(ctx, dir, u.file, u.rel, u.tree)), signal)
          .catch((e: unknown) => failedResult(u.file.name, 'upload', safeTarget(u.file), e, 0, undefined, 'upload'));
        if (r.ok || !isConsequence(r, signal)) results.push(r);
      }),
    );
    const cancelled = signal.aborted;
    for (const u of uploads) {
      if (results.some((r) => r.name === u.file.name && r.url === safeTarget(u.file))) continue;
      results.push(unfinishedResult(u.file.name, 'upload', safeTarget(u.file), 'cancelled'));
    }
    for (const file of outputs) {
      if (file.target === undefined || !file.when[job.outcome])
        results.push({ name: file.name, kind: 'kept', ok: true, bytes: 0, attempts: 0 });
    }
    return stageResult(results, cancelled, 'out');
  }

  async #uploadOutput(
    ctx: JobContext,
    sessionDir: string,
    file: StageOutFile,
    rel: string,
    tree: boolean,
  ): Promise<FileResult> {
    const tu = parseTransferUrl(file.target as string, file.options);
    const tally: AttemptTally = { attempts: 0 };
    const startTime = new Date();
    let r: FileResult;
    try {
      if (tu.scheme === 'file') throw stagingError('CE_ERR_STAGING_BAD_URL', 'file URLs cannot be upload targets');
      const files = tree ? await listTree(sessionDir, rel) : [{ rel, sub: '' }];
      let bytes = 0;
      for (const f of files) {
        const url = new URL(tu.url.href);
        if (f.sub !== '')
          url.pathname = `${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}${f.sub.split('/').map(encodeURIComponent).join('/')}`;
        bytes += await this.#uploadOne(ctx, sessionDir, file, tu, url, f.rel, tally);
      }
      if (this.s.cfg.removeUploadedOutputs) await removeOutput(sessionDir, rel, tree);
      r = {
        name: file.name,
        url: tu.display,
        kind: 'upload',
        ok: true,
        bytes,
        attempts: tally.attempts,
        startTime,
        endTime: new Date(),
      };
    } catch (e) {
      r = failedResult(file.name, 'upload', tu.display, e, tally.attempts, startTime, 'upload');
    }
    logFileEnd(this.s, ctx, 'out', r);
    return r;
  }

  async #uploadOne(
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
      return { stream: handle.createReadStream({ highWaterMark: this.s.cfg.highWaterMarkBytes }), size };
    };
    const first = await open();
    first.stream.destroy();
    const size = first.size;
    const what = { verb: 'upload', file: file.name, url: tu.display } as const;
    if (tu.scheme === 'gfal2') {
      const scheme = url.protocol.slice(0, -1);
      if ((await schemeRegistry()).pathFor(scheme) !== 'gfal2')
        throw stagingError('CE_ERR_STAGING_BAD_URL', `Unsupported protocol '${scheme}' (no gfal2 plugin installed)`);
      // As the job's account: the owner of its session directory (the service's own: undefined).
      const owner = ownerToGive(await stat(sessionDir));
      await transferWithRetries(this.s, ctx, what, ctx.signal, tally, file.delegationId, async (credential) => {
        const h = await ctx.gfal2.helperFor(url, owner, credential, file.fromList === true);
        await gfal2Upload(
          ctx.gfal2,
          h.helper,
          h.owner,
          (await open()).stream,
          size,
          url,
          overwriteAllowed(tu),
          (n) => ctx.progress(file.name, n),
          ctx.signal,
        );
      });
      return size;
    }
    await transferWithRetries(this.s, ctx, what, ctx.signal, tally, file.delegationId, (credential) =>
      uploadAttempt(
        ctx.http,
        {
          url,
          credential,
          size,
          open: async () => (await open()).stream,
          overwrite: overwriteAllowed(tu),
          webdav: tu.webdav,
          collections: ctx.collections,
          verify: this.s.cfg.verifyUploads,
          onProgress: (n) => ctx.progress(file.name, n),
        },
        ctx.signal,
      ),
    );
    return size;
  }
}

async function listTree(sessionDir: string, rel: string): Promise<{ rel: string; sub: string }[]> {
  const files = await listSessionTree(sessionDir, rel);
  return files.map((sub) => ({ rel: `${rel}/${sub}`, sub })).sort((a, b) => a.sub.localeCompare(b.sub));
}

function safeTarget(file: StageOutFile): string {
  try {
    return parseTransferUrl(file.target ?? '').display;
  } catch {
    return `the target of ${file.name}`;
  }
}
