/**
 * The staging adapter's own input and output shapes. The job engine maps its job
 * description model onto these; nothing here depends on how descriptions are parsed.
 */
import type { ErrorCode } from '../errors/catalog.js';

/** An input file of a job (xRSL `inputfiles`, ADL `InputFile`). */
export interface StageInFile {
  /** Session-relative path (`data/in.txt` or `/data/in.txt`). */
  readonly name: string;
  /** URL to download (http, https, dav, davs, file). Absent: the client uploads the file. */
  readonly source?: string;
  /** URL options given apart from the URL (the URL's own `;opt=value` part is read too). */
  readonly options?: Readonly<Record<string, string>>;
  /** Expected size in bytes. */
  readonly size?: number;
  /** Expected checksum, `type:value` (adler32, md5, sha256, ...) or a bare cksum value. */
  readonly checksum?: string;
  readonly executable: boolean;
  /** Per-file delegation; default: the job's. */
  readonly delegationId?: string;
}

export type Outcome = 'success' | 'failure' | 'cancel';

/** An output file of a job (xRSL `outputfiles`, ADL `OutputFile`). */
export interface StageOutFile {
  /** Session-relative path; `/` = the whole session directory; a trailing `/` = a directory tree; `@name` = dynamic list. */
  readonly name: string;
  /** URL to upload to (http, https, dav, davs). Absent: kept for the client to download. */
  readonly target?: string;
  readonly options?: Readonly<Record<string, string>>;
  readonly delegationId?: string;
  /** For which outcomes the target is used (ADL UseIfSuccess/UseIfFailure/UseIfCancel; defaults true/false/false). */
  readonly when: { readonly success: boolean; readonly failure: boolean; readonly cancel: boolean };
  /** From a dynamic output list (written by the job after submission): its target was not checked then. */
  readonly fromList?: boolean;
}

/** Completion of the client's uploads (the sessions code appends `/<name>` to `input_status` and pokes the engine). */
export interface UploadWatch {
  /**
   * True once the client's upload of the file is complete. `path` is the session path
   * as `input_status` records it: `/` + the name without leading slashes (`/data/in.txt`).
   */
  isUploaded(path: string): boolean | Promise<boolean>;
  /** Resolves when an upload may have completed; without it the files are polled. */
  changed?(signal: AbortSignal): Promise<void>;
}

/**
 * Access to the job's session directory for the length of one operation: `fn` gets a
 * path that stays valid (and confined to the job's real directory) until it settles.
 * Staging takes it per operation (a job's downloads while it holds its stage-in slot,
 * session-hold.ts; one upload, one look at a client's file, the pruning), never across a
 * wait for a job slot or for client uploads: jobs waiting there hold no descriptor,
 * however many there are.
 */
export type SessionAccess = <T>(fn: (sessionDir: string) => Promise<T>) => Promise<T>;

/** The session directory as a plain path (trusted callers, tests) or through leases. */
export type SessionRef = { readonly sessionDir: string } | { readonly session: SessionAccess };

/** Runs `fn` with the session directory of `ref`. */
export function withSession<T>(ref: SessionRef, fn: (sessionDir: string) => Promise<T>): Promise<T> {
  return 'session' in ref ? ref.session(fn) : fn(ref.sessionDir);
}

export type StageInJob = SessionRef & {
  readonly id: string;
  /** Owner identity (DN), passed to the CredentialSource and used for cache permissions. */
  readonly owner: string;
  readonly files: readonly StageInFile[];
  /** The job's main delegation. */
  readonly delegationId?: string;
  readonly uploads?: UploadWatch;
  /** When the job entered PREPARING: the user-upload wait is measured from here (default: now). */
  readonly preparingSince?: Date;
  /**
   * A job without downloads looks at its client uploads once instead of waiting for
   * them: if some are still arriving, the result says so (`waiting`) and the caller
   * stages in again later, passing `judged` back.
   */
  readonly lookOnce?: boolean;
  /** The files judged complete by earlier looks (`waiting.judged`), by index: not judged again. */
  readonly judged?: ReadonlyMap<number, FileResult>;
};

export type StageOutJob = SessionRef & {
  readonly id: string;
  readonly owner: string;
  readonly files: readonly StageOutFile[];
  readonly delegationId?: string;
  readonly outcome: Outcome;
};

export type TransferKind = 'download' | 'upload' | 'user' | 'kept';

export interface FileResult {
  /** Session-relative name as given. */
  readonly name: string;
  /** Source or target, redacted; absent for user-uploaded and kept files. */
  readonly url?: string;
  readonly kind: TransferKind;
  readonly ok: boolean;
  /** Bytes in the session file (downloads, uploads). */
  readonly bytes: number;
  readonly attempts: number;
  readonly fromCache?: boolean;
  readonly error?: string;
  readonly code?: ErrorCode;
  readonly startTime?: Date;
  readonly endTime?: Date;
}

export interface ControlLines {
  /** Lines for the job's `input_status` (`/<name>` per input now present). */
  readonly inputStatus: readonly string[];
  /** Lines for `output_status` (`/<name> <url>`, escaped as in `output`, per uploaded output). */
  readonly outputStatus: readonly string[];
  /** Lines for `statistics` (`inputfile:url=...` / `outputfile:url=...`). */
  readonly statistics: readonly string[];
}

export interface StageResult {
  readonly ok: boolean;
  /** The signal aborted the staging. */
  readonly cancelled: boolean;
  readonly files: readonly FileResult[];
  /** First failure, in words a user can act on (`Failed to download https://h/x: 404 Not Found`). */
  readonly failureReason?: string;
  /** Every failure, one line each (for the job's `failed`/`errors` files). */
  readonly failures: readonly string[];
  readonly control: ControlLines;
  readonly bytes: number;
  /**
   * `lookOnce`: client uploads are still arriving and nothing failed. Look again (stage
   * in with `judged`) when an upload completes, or at `checkAt` (epoch ms) at the latest:
   * that look fails the files whose wait has run out. Nothing else in the result counts.
   */
  readonly waiting?: { readonly checkAt: number; readonly judged: ReadonlyMap<number, FileResult> };
}

export interface StageProgress {
  readonly jobId: string;
  /** File being moved. */
  readonly name: string;
  /** Bytes of this file so far. */
  readonly fileBytes: number;
  /** Bytes of the whole job so far. */
  readonly jobBytes: number;
}

export type ProgressListener = (p: StageProgress) => void;
