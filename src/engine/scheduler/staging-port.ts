/**
 * Data staging for the engine: maps a job record to the stager's jobs (src/staging),
 * writes the results to the job's control files, and turns client uploads into an
 * event (`poked`) so a job waiting for its inputs moves the moment the last one lands.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { logLine, type ControlDir } from '../../store/control-dir.js';
import type { JobRecord } from '../../store/job-record.js';
import type { SessionsPort, StagingPort } from './ports.js';
import type { StageOutMode } from '../state-machine.js';
import { isCeError } from '../../errors/ce-error.js';
import {
  FileCache,
  Stager,
  type FileResult,
  type SessionAccess,
  type StageInFile,
  type StageOutFile,
  type StageResult,
} from '../../staging/index.js';
import type { CredentialSource } from '../../staging/credentials.js';

export interface StagingDeps {
  config: Config;
  control: ControlDir;
  sessions: Pick<SessionsPort, 'withRoot' | 'check' | 'unmadeView'>;
  /** The job owner's delegated credentials (the delegation service). */
  credentials: CredentialSource;
  log: Logger;
  cacheDir: string;
  /**
   * The CA directory storage servers' certificates are verified against by the gfal2 helpers
   * (the site's `tls.caDir`); undefined: their X509_CERT_DIR or the grid default.
   */
  certDir?: string;
  /** Told of every stage-in and stage-out result (metrics). */
  onResult?: (direction: 'in' | 'out', r: StageResult) => void;
}

export interface StagingWiring extends StagingPort {
  /** Something about the job changed (a client upload completed). */
  poked(id: string): void;
  /** The stage-in job slots now: taken, jobs waiting for one, the limit (why a job waits). */
  stageInSlots(): { readonly active: number; readonly queued: number; readonly limit: number };
  /** Ends what staging keeps running between jobs (the spare gfal2 helpers). */
  close(): Promise<void>;
}

const clean = (n: string): string => n.replace(/^\/+/, '').replace(/\/+$/, '');

type OutputOptions = JobRecord['description']['outputFiles'][number]['options'];

/** The outcomes on which an output with a target is uploaded (the stager's `when`). */
function uploadedOn(o: OutputOptions): Record<StageOutMode, boolean> {
  return { success: o.useIfSuccess, failure: o.useIfFailure, cancel: o.useIfCancel };
}

export async function createStagingPort(d: StagingDeps): Promise<StagingWiring> {
  const s = d.config.staging;
  const cache = s.cache.enabled
    ? await FileCache.open({
        dir: d.cacheDir,
        maxBytes: s.cache.maxBytes,
        accessRecheckMs: s.cache.accessRecheckSeconds * 1000,
        lockStaleMs: s.cache.lockStaleSeconds * 1000,
        logger: d.log,
      })
    : undefined;
  const stager = new Stager({
    config: s,
    credentials: d.credentials,
    ...(cache ? { cache } : {}),
    ...(d.certDir !== undefined ? { certDir: d.certDir } : {}),
    logger: d.log,
  });
  const waiters = new Map<string, Set<() => void>>();
  /** Jobs looking at their uploads one look at a time (`lookOnce`) with some files judged complete already. */
  const judgedSoFar = new Map<string, ReadonlyMap<number, FileResult>>();

  const record = async (j: JobRecord, r: StageResult, dir: 'in' | 'out'): Promise<void> => {
    d.onResult?.(dir, r);
    if (r.control.statistics.length)
      await d.control.append(j.id, 'statistics', r.control.statistics.map((l) => `${l}\n`).join(''));
    if (dir === 'out' && r.control.outputStatus.length)
      await d.control.append(j.id, 'output_status', r.control.outputStatus.map((l) => `${l}\n`).join(''));
    for (const f of r.failures) await d.control.append(j.id, 'errors', logLine(f));
  };

  /**
   * Staging takes a lease on the job's verified session directory for each operation
   * (SessionAccess): a job that replaced it (link, other directory) fails with a reason
   * instead of having the service read, write or prune elsewhere, and a job waiting for
   * uploads or a transfer slot holds no descriptor meanwhile.
   */
  const inSession = async (
    j: JobRecord,
    fn: (session: SessionAccess) => Promise<StageResult>,
    checked?: () => void,
  ): Promise<StageResult | { replaced: string }> => {
    try {
      await d.sessions.check(j.id, j.sessionIdent);
    } catch (e) {
      checked?.();
      if (!isCeError(e)) throw e;
      // Refused before any transfer: replaced (409) or gone (the job removed it).
      const reason =
        e.code === 'CE_ERR_SESSION_NOT_FOUND' ? `The session directory of job ${j.id} is missing` : e.message;
      await d.control.append(j.id, 'errors', logLine(reason));
      return { replaced: reason };
    }
    checked?.();
    return fn((op) => d.sessions.withRoot(j.id, j.sessionIdent, op));
  };

  return {
    stageInSlots: () => stager.stats().in,
    close: () => stager.close(),
    poked(id) {
      const w = waiters.get(id);
      if (!w) return;
      waiters.delete(id);
      for (const f of w) f();
    },
    // No input file: nothing to download and no upload to wait for. The session directory
    // is still checked before the batch job starts in it (the submit step checks it).
    nothingToStageIn: (j) => j.description.inputFiles.length === 0,
    // A job killed before its directory was made, with no output to upload on this
    // outcome: its stage-out would read an empty directory, keep what has no target
    // (nothing is there) and write no control line. Dynamic output lists (`@name`) are
    // read from the session, so a job with one is staged out as usual.
    nothingToStageOut: (j, mode) =>
      !j.description.outputFiles.some(
        (o) => o.name.startsWith('@') || (o.target !== undefined && uploadedOn(o.options)[mode]),
      ) && d.sessions.unmadeView?.(j.id, j.sessionIdent) !== undefined,
    async stageIn(j, signal, o = {}) {
      const desc = j.description;
      const files: StageInFile[] = desc.inputFiles.map((f) => ({
        name: f.name,
        ...(f.source !== undefined ? { source: f.source } : {}),
        ...(f.options ? { options: f.options } : {}),
        ...(f.size !== undefined ? { size: f.size } : {}),
        ...(f.checksum !== undefined ? { checksum: f.checksum } : {}),
        executable: f.executable || clean(f.name) === clean(desc.executable ?? ''),
        ...(f.delegationId !== undefined ? { delegationId: f.delegationId } : {}),
      }));
      const uploaded = async (): Promise<Set<string>> =>
        new Set(((await d.control.read(j.id, 'input_status'))?.toString('utf8') ?? '').split('\n').filter(Boolean));
      const judged = judgedSoFar.get(j.id);
      judgedSoFar.delete(j.id);
      const r = await inSession(
        j,
        (session) =>
          stager.stageIn(
            {
              id: j.id,
              owner: j.owner,
              session,
              files,
              ...(j.delegationId ? { delegationId: j.delegationId } : {}),
              preparingSince: new Date(o.preparingSince ?? j.updatedAt),
              ...(o.lookOnce === true ? { lookOnce: true } : {}),
              ...(judged === undefined ? {} : { judged }),
              uploads: {
                isUploaded: async (path) => (await uploaded()).has(path),
                changed: (sig) =>
                  new Promise<void>((resolve) => {
                    let set = waiters.get(j.id);
                    if (!set) waiters.set(j.id, (set = new Set()));
                    const done = (): void => {
                      set?.delete(done);
                      // An abandoned wait (job killed or cleaned) leaves no empty entry behind.
                      if (set?.size === 0 && waiters.get(j.id) === set) waiters.delete(j.id);
                      resolve();
                    };
                    set.add(done);
                    sig.addEventListener('abort', done, { once: true });
                  }),
              },
            },
            signal,
          ),
        o.sessionChecked,
      );
      if ('replaced' in r) return { ok: false, reason: r.replaced };
      if (r.waiting !== undefined) {
        if (r.waiting.judged.size > 0) judgedSoFar.set(j.id, r.waiting.judged);
        return { ok: false, waiting: true, checkAt: r.waiting.checkAt };
      }
      await record(j, r, 'in');
      if (r.ok) return { ok: true };
      return {
        ok: false,
        reason: r.failureReason ?? 'Data download failed',
        ...(r.cancelled ? { aborted: true } : {}),
      };
    },
    async stageOut(j, mode, signal) {
      const desc = j.description;
      const files: StageOutFile[] = desc.outputFiles.map((o) => ({
        name: o.name,
        ...(o.target !== undefined ? { target: o.target } : {}),
        ...(o.urlOptions ? { options: o.urlOptions } : {}),
        ...(o.delegationId !== undefined ? { delegationId: o.delegationId } : {}),
        // Outputs without a target stay for the client whatever the outcome (A-REX).
        when: o.target === undefined ? { success: true, failure: true, cancel: true } : uploadedOn(o.options),
      }));
      // Unlike A-REX, stdout, stderr and the log directory are always kept, listed or not.
      const listed = new Set(files.map((f) => clean(f.name)));
      for (const n of [desc.stdout, desc.stderr, desc.logDir]) {
        if (n && !listed.has(clean(n))) files.push({ name: n, when: { success: true, failure: true, cancel: true } });
      }
      // A failed job that may be restarted keeps its client-uploaded inputs (A-REX §7.3).
      if (mode !== 'success' && j.rerunsLeft > 0) {
        for (const f of desc.inputFiles)
          if (f.source === undefined && !listed.has(clean(f.name)))
            files.push({ name: f.name, when: { success: true, failure: true, cancel: true } });
      }
      // A job killed before its directory was made: what it holds is nothing, so the
      // stage-out reads an empty directory (the same results: outputs to upload are
      // missing, the rest is kept) and the directory is not made just to be read.
      const view = d.sessions.unmadeView?.(j.id, j.sessionIdent);
      const stage = (session: SessionAccess): Promise<StageResult> =>
        stager.stageOut(
          {
            id: j.id,
            owner: j.owner,
            session,
            files,
            ...(j.delegationId ? { delegationId: j.delegationId } : {}),
            outcome: mode,
          },
          signal,
        );
      const r = view === undefined ? await inSession(j, stage) : await stage(view);
      if ('replaced' in r) return { ok: false, reason: r.replaced };
      await record(j, r, 'out');
      if (r.ok) return { ok: true };
      return { ok: false, reason: r.failureReason ?? 'Data upload failed', ...(r.cancelled ? { aborted: true } : {}) };
    },
  };
}
