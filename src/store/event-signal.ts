/**
 * "Job events may have been added": a signal from the writers of job rows (JobStore) to
 * the readers of the event sequence (JobEvents, and through it the stream's feed),
 * carried by the database connection they share.
 *
 * Why: the event rows are written by triggers inside the job writes (job-events.ts), so
 * the writer cannot say which events it made, only that it may have made some. Without
 * the signal the feed had to read the table every few milliseconds while any stream was
 * open; on a quiet service that was 200 wake-ups a second for nothing (about 2 % of a
 * core: docs/performance.md, "Job event stream"). Every job write happens in the service
 * process (src/admin/admin-requests.ts: nothing else acts on jobs), on its one connection,
 * so the signal sees them all; the feed keeps a slow poll only as a safety net.
 *
 * Listeners run synchronously after the write has committed (the writer's transaction
 * has returned), and must only schedule work, never write.
 */
import type { Db } from './database.js';

const listeners = new WeakMap<Db, Set<() => void>>();

/** Calls `fn` after each job write on `db` that may have added events; returns the unsubscribe. */
export function onEventsAdded(db: Db, fn: () => void): () => void {
  let set = listeners.get(db);
  if (set === undefined) listeners.set(db, (set = new Set()));
  set.add(fn);
  return () => void set.delete(fn);
}

/** Called by a writer after a committed write that may have added events. */
export function eventsAdded(db: Db): void {
  const set = listeners.get(db);
  if (set !== undefined) for (const fn of set) fn();
}
