/**
 * The session-directory operations the REST resource offers, with their side effects
 * on the job: an upload that completes a file is recorded as `/<path>` in the job's
 * `input_status` control file (one line per completed file, the format A-REX's
 * grid manager reads) and the engine is poked, so a job waiting for client-uploaded
 * inputs moves on without polling.
 *
 * Callers resolve the job first (ownership); this module trusts the job id and the
 * session directory it is given and enforces everything about paths.
 */
import { ceError } from '../errors/ce-error.js';
import type { ControlDir } from '../store/control-dir.js';
import type { EnginePort } from '../jobs/ports.js';
import { openDirChain, openForRead, removeEntry, type Opened } from '../fs/safe-fs.js';
import type { SessionPath } from './session-path.js';
import { writeUpload, type UploadRequest, type UploadResult } from './upload.js';
import { UploadTracker } from './upload-tracker.js';
import { UploadQuota } from './upload-quota.js';

export interface SessionFilesOptions {
  readonly control: Pick<ControlDir, 'append'>;
  readonly engine: Pick<EnginePort, 'jobPoked'>;
  /** Shared tracker of ranged uploads (default: a private one with default bounds). */
  readonly tracker?: UploadTracker;
  /** Largest file (end offset) a PUT may create (config sessions.maxFileBytes). */
  readonly maxFileBytes?: number;
  /** Upload quota of one job (config sessions.maxUploadBytesPerJob). */
  readonly maxUploadBytesPerJob?: number;
  /** Whether a job still exists: the quota forgets the others. */
  readonly jobExists: (jobId: string) => boolean;
}

export const DEFAULT_MAX_FILE_BYTES = 32 * 1024 ** 3;
export const DEFAULT_MAX_UPLOAD_BYTES_PER_JOB = 64 * 1024 ** 3;

export class SessionFiles {
  readonly tracker: UploadTracker;
  readonly quota: UploadQuota;
  readonly maxFileBytes: number;
  readonly #o: SessionFilesOptions;

  constructor(o: SessionFilesOptions) {
    this.#o = o;
    this.tracker = o.tracker ?? new UploadTracker();
    this.quota = new UploadQuota(o.maxUploadBytesPerJob ?? DEFAULT_MAX_UPLOAD_BYTES_PER_JOB, o.jobExists);
    this.maxFileBytes = o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** Opens a file or directory for reading; the caller closes `handle`. */
  async open(sessionDir: string, path: SessionPath): Promise<Opened> {
    const o = await openForRead(sessionDir, path.segments);
    if (o.kind === 'file' && path.trailingSlash) {
      await o.handle.close();
      throw ceError('CE_ERR_SESSION_NOT_FOUND');
    }
    return o;
  }

  async put(u: Omit<UploadRequest, 'maxFileBytes'>): Promise<UploadResult> {
    const r = await writeUpload({ ...u, maxFileBytes: this.maxFileBytes }, this);
    if (r.complete) {
      await this.#o.control.append(u.jobId, 'input_status', `/${u.path.rel}\n`).catch(noSpace);
      this.#o.engine.jobPoked(u.jobId);
    }
    return r;
  }

  /** Deletes a file, link or directory (recursively). The session directory itself is refused. */
  async remove(jobId: string, sessionDir: string, path: SessionPath): Promise<void> {
    const segs = path.segments;
    const name = segs[segs.length - 1];
    if (name === undefined) throw ceError('CE_ERR_SESSION_ROOT_DELETE');
    const parent = await openDirChain(sessionDir, segs.slice(0, -1));
    try {
      await removeEntry(parent, name, path.trailingSlash);
    } finally {
      await parent.close();
    }
    this.tracker.forget(jobId, path.rel, true);
    this.quota.forget(jobId, path.rel, true);
  }
}

/** The file is in place but its completion could not be recorded: a full disk is a 507 too. */
function noSpace(e: unknown): never {
  const c = (e as NodeJS.ErrnoException).code;
  if (c === 'ENOSPC' || c === 'EDQUOT') throw ceError('CE_ERR_SESSION_NO_SPACE');
  throw e;
}
