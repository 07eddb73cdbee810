/**
 * Removing what a job left on disk: all of it when the job is cleaned (its record last),
 * or all but the minimal record and its `errors`, `failed`, `diag` and `statistics`
 * control files when its session lifetime ends (wiped). The batch backend is asked first
 * to end anything of the job still running (a daemon that outlived it). Removal is
 * idempotent: a crash half-way leaves a record the next start removes again.
 */
import { rm } from 'node:fs/promises';
import type { JobRecord } from '../../store/job-record.js';
import type { SchedulerOptions } from './scheduler-options.js';
import { attemptDir } from './batch-spec.js';

export type RemovalDeps = Pick<
  SchedulerOptions,
  'store' | 'control' | 'backend' | 'sessions' | 'credentials' | 'lrmsJobsRoot' | 'log'
>;

/** Control files a wiped job keeps with its minimal record (what happened to it). */
const KEPT_WHEN_WIPED = ['errors', 'failed', 'diag', 'statistics'];

/**
 * Clean: files first, the record last. A crash in between leaves a FINISHED record with
 * its clean flag set, which the next start cleans again. (A batch job still to be ended
 * is released by the caller first: a wiped job's was, at its wipe.)
 */
export async function removeJob(d: RemovalDeps, j: JobRecord): Promise<void> {
  // The four removals touch different folders, so they run side by side: one after the
  // other, a clean was ~40 file operations in a row, each waiting for a turn of an event
  // loop that under load takes ~100 ms (4-6 s per clean; the engine fell behind the
  // cleans asked for and the store grew, docs/performance.md "Soak memory"). A wiped
  // job's directory went at the wipe (with anything the job had renamed it to): its
  // final clean does not search the whole sessions folder again.
  await Promise.all([
    removeSession(d, j, j.state !== 'DELETED'),
    d.control.removeAll(j.id),
    d.credentials?.remove(j.id).catch(() => undefined),
    removeBatchDirs(d, j),
  ]);
  const fresh = d.store.get(j.id);
  if (fresh) d.store.delete(fresh);
}

/** The session lifetime ended: the job's files go; its record and what it says of the job stay. */
export async function wipeJob(d: RemovalDeps, j: JobRecord): Promise<void> {
  await releaseBatchJob(d, j);
  await removeSession(d, j, true);
  await d.control.removeAll(j.id, KEPT_WHEN_WIPED);
  await removeBatchDirs(d, j);
}

/** Every attempt's backend directory of the job (`<root>/<id>/r<n>`). */
function removeBatchDirs(d: RemovalDeps, j: JobRecord): Promise<void> {
  return rm(attemptDir(d.lrmsJobsRoot, j).replace(/\/r\d+$/, ''), { recursive: true, force: true });
}

/**
 * The session directory goes, and what the job made of it: a link in its place is
 * removed, never followed; the job's own directory is found by its identity even if
 * the job renamed it. A failure is logged and does not keep the job's record (the
 * removal cannot become possible later by waiting).
 */
async function removeSession(d: RemovalDeps, j: JobRecord, findRenamed: boolean): Promise<void> {
  try {
    const r = await d.sessions.remove(j.id, j.sessionIdent, { findRenamed });
    if (r.found === 'link' || r.found === 'other' || r.keptForeign || r.leftovers.length > 0) {
      d.log.warn(
        { job: j.id, found: r.found, leftovers: r.leftovers, keptForeign: r.keptForeign },
        'session directory had been replaced by the job; removed without following it',
      );
    }
  } catch (e) {
    d.log.warn({ err: e, job: j.id }, 'session directory not fully removed');
  }
}

/** Before a job's files go: the backend kills anything of it still running (a daemon that outlived it). */
export async function releaseBatchJob(d: RemovalDeps, j: JobRecord): Promise<void> {
  if (j.localId === null || !d.backend.release) return;
  await d.backend
    .release({ jobId: j.id, lrmsDir: attemptDir(d.lrmsJobsRoot, j) })
    .catch((e: unknown) => d.log.warn({ err: e, job: j.id }, 'batch release failed'));
}
