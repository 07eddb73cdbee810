/**
 * Inputs without a source are uploaded by the client (REST PUT into the session).
 * A-REX's rules: a file declared with a size is judged by its size (smaller = still
 * arriving, equal = done, bigger = error); otherwise it is done when the upload was
 * recorded as complete. A declared checksum must match. The wait is bounded (A-REX:
 * 600 s from entering PREPARING): `User file: /<name> - Timeout waiting`.
 */
import { checksumMatches, createHasher, type ExpectedChecksum } from './checksum.js';
import { sleep } from './retry.js';
import { lstatInSession, openSessionFile } from './session-path.js';
import { StagingError, stagingError } from './staging-error.js';
import type { SessionAccess, UploadWatch } from './types.js';
import { sessionPath } from './control-lines.js';

export interface UserFile {
  readonly index: number;
  readonly rel: string;
  readonly size?: number;
  readonly checksum?: ExpectedChecksum;
  readonly executable: boolean;
}

export type UserFileOutcome =
  { readonly ok: true; readonly bytes: number } | { readonly ok: false; readonly error: StagingError };

export interface UserWaitOptions {
  /** Each look at the files takes the session directory for that look only. */
  readonly session: SessionAccess;
  readonly uploads?: UploadWatch;
  /** Epoch ms after which waiting files fail. */
  readonly deadline: number;
  readonly pollMs: number;
  readonly now?: () => number;
  /**
   * Look once instead of waiting: with files still arriving (and the deadline not
   * passed), return when the next look is due. The caller holds nothing meanwhile (a job
   * waiting for uploads is an id and two numbers, not a suspended chain of calls) and
   * looks again on an upload event or at that time.
   */
  readonly once?: boolean;
}

/** Resolves when every file has an outcome; with `once`, the time (epoch ms) of the next look if some are still arriving. */
export async function waitForUserFiles(
  files: readonly UserFile[],
  opts: UserWaitOptions,
  signal: AbortSignal,
  onDone: (f: UserFile, outcome: UserFileOutcome) => void,
): Promise<number | undefined> {
  const now = opts.now ?? Date.now;
  const pending = new Set(files);
  while (pending.size > 0) {
    // Listening for upload events starts before the look, not after it: an upload completing
    // between the two would wake nobody, and the job would wait for the next poll (a minute
    // with upload events: a likely cause of a job once seen stuck in PREPARING in a test run).
    // With `once` the caller looks again on an event (the scheduler's poke).
    const listening = new AbortController();
    const changed =
      opts.once === true
        ? undefined
        : opts.uploads?.changed?.(AbortSignal.any([signal, listening.signal]))?.catch(() => undefined);
    try {
      if (await lookAt(pending, opts, signal, onDone)) return undefined;
      const left = opts.deadline - now();
      if (left <= 0) {
        for (const f of pending)
          onDone(f, {
            ok: false,
            error: stagingError(
              'CE_ERR_STAGING_USER_FILE_TIMEOUT',
              `User file: ${sessionPath(f.rel)} - Timeout waiting`,
            ),
          });
        return undefined;
      }
      if (opts.once === true) {
        signal.throwIfAborted();
        return now() + Math.min(left, opts.pollMs);
      }
      await nextCheck(Math.min(left, opts.pollMs), signal, changed);
    } finally {
      listening.abort();
    }
  }
  return undefined;
}

/** One look at each pending file: those with an outcome leave `pending`; true when none is left. */
async function lookAt(
  pending: Set<UserFile>,
  opts: UserWaitOptions,
  signal: AbortSignal,
  onDone: (f: UserFile, outcome: UserFileOutcome) => void,
): Promise<boolean> {
  for (const f of [...pending]) {
    signal.throwIfAborted();
    let outcome: UserFileOutcome | undefined;
    try {
      const bytes = await opts.session((dir) => judge(f, dir, opts));
      if (bytes !== undefined) outcome = { ok: true, bytes };
    } catch (e) {
      outcome = {
        ok: false,
        error:
          e instanceof StagingError
            ? e
            : stagingError('CE_ERR_STAGING_LOCAL_IO', `User file: ${sessionPath(f.rel)} - cannot be read`, {
                cause: e,
              }),
      };
    }
    if (outcome !== undefined) {
      pending.delete(f);
      onDone(f, outcome);
    }
  }
  return pending.size === 0;
}

/** Bytes of a complete, valid file; undefined while still arriving; throws when it can never be right. */
async function judge(f: UserFile, sessionDir: string, opts: UserWaitOptions): Promise<number | undefined> {
  const label = `User file: ${sessionPath(f.rel)} -`;
  const invalid = (why: string): StagingError => stagingError('CE_ERR_STAGING_USER_FILE_INVALID', `${label} ${why}`);
  // Asked before the file is looked at: an upload is recorded as complete only after its
  // file was renamed into place, so a file recorded before the look is there at the look.
  // (Looked at first, an upload completing between the look and the question read as
  // "recorded, but nothing found" and failed the job.)
  const recorded =
    f.size === undefined && opts.uploads !== undefined ? await opts.uploads.isUploaded(sessionPath(f.rel)) : undefined;
  let st;
  try {
    st = await lstatInSession(sessionDir, f.rel);
  } catch (e) {
    if (e instanceof StagingError && e.code === 'CE_ERR_STAGING_UNSAFE_PATH')
      throw invalid('Expected file. Symbolic link found.');
    throw e;
  }
  if (f.size !== undefined) {
    if (st === undefined) return undefined;
    if (st.isDirectory()) throw invalid('Expected file. Directory found.');
    if (!st.isFile()) throw invalid('Expected file. Something else found.');
    if (st.size > f.size) throw invalid('Delivered file is bigger than specified.');
    if (st.size < f.size) return undefined;
  } else {
    const uploaded = recorded ?? st?.isFile() === true;
    if (!uploaded) return undefined;
    if (st === undefined) throw invalid('Expected file. Nothing found.');
    if (st.isDirectory()) throw invalid('Expected file. Directory found.');
    if (!st.isFile()) throw invalid('Expected file. Something else found.');
  }
  if (f.checksum === undefined && !f.executable) return st.size;
  // Read and chmod through a descriptor opened without following links: the file
  // judged above may have been swapped for a link since (chmod would follow it).
  const { handle } = await openSessionFile(sessionDir, f.rel);
  try {
    if (f.checksum !== undefined) {
      const h = createHasher(f.checksum.algorithm);
      const buf = Buffer.allocUnsafe(1024 * 1024);
      for (let pos = 0; ;) {
        const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        h.update(buf.subarray(0, bytesRead));
        pos += bytesRead;
      }
      if (!checksumMatches(f.checksum, h.digest())) throw invalid('Delivered file has a wrong checksum.');
    }
    if (f.executable) await handle.chmod(((await handle.stat()).mode & 0o777) | 0o111);
  } finally {
    await handle.close();
  }
  return st.size;
}

/** Wait for the poll interval or an upload event (`changed`: listened for since before the last look). */
async function nextCheck(ms: number, signal: AbortSignal, changed: Promise<unknown> | undefined): Promise<void> {
  const ctl = new AbortController();
  const both = AbortSignal.any([signal, ctl.signal]);
  const waits: Promise<unknown>[] = [sleep(ms, both)];
  if (changed !== undefined) waits.push(changed);
  try {
    await Promise.race(waits.map((p) => p.catch(() => undefined)));
  } finally {
    ctl.abort();
  }
  signal.throwIfAborted();
}
