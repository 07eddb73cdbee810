/**
 * Job counters for the service document, counted the way A-REX's info provider
 * counts them, so that brokers and monitoring read the same figures from Ceres:
 *
 * | counter          | jobs counted                                                        |
 * |------------------|---------------------------------------------------------------------|
 * | total            | every job not yet FINISHED (or DELETED): finished jobs do not count |
 * | preLrmsWaiting   | ACCEPTED (also pending), i.e. not yet being prepared                |
 * | staging          | PREPARING (also pending), SUBMIT, pending INLRMS, FINISHING, CANCELING |
 * | running          | INLRMS with batch state `R`                                         |
 * | suspended        | INLRMS with batch state `S`                                         |
 * | waiting          | INLRMS with batch state `Q` (queued in the batch system)            |
 * | usedSlots        | slots of the running jobs                                           |
 * | requestedSlots   | slots of jobs not yet submitted (ACCEPTED, PREPARING, SUBMIT) and of queued ones |
 *
 * INLRMS jobs whose batch state is `E`, `O`, `EXECUTED` or unknown count in `total`
 * only (as in A-REX). One pass, no I/O: the caller feeds whatever job rows it has.
 */
import type { InternalState, LrmsState } from '../vocabulary/job-states.js';

export interface JobCounters {
  total: number;
  running: number;
  waiting: number;
  staging: number;
  suspended: number;
  preLrmsWaiting: number;
  usedSlots: number;
  requestedSlots: number;
}

export interface JobTallyEntry {
  readonly gmState: InternalState;
  /** Held back from the next state by a limit (A-REX `PENDING:` prefix). */
  readonly pending?: boolean;
  /** Batch-system state while in INLRMS; unknown when absent. */
  readonly lrmsState?: LrmsState;
  readonly queue?: string;
  /** The name of the route the job took (docs/routes.md); absent: none. */
  readonly route?: string;
  /** Slots the job asked for (default 1). */
  readonly slots?: number;
}

export interface JobTally {
  readonly all: Readonly<JobCounters>;
  /** Per queue name; a configured queue missing here has no jobs (all counters 0). */
  readonly byQueue: ReadonlyMap<string, Readonly<JobCounters>>;
  /** Per route share (routeShareKey of route and queue); one missing here has no jobs. */
  readonly byRoute: ReadonlyMap<string, Readonly<JobCounters>>;
}

/** The key of a route's share in a queue (a route taking jobs of several queues has a share in each). */
export const routeShareKey = (route: string, queue: string): string => `${route}\0${queue}`;

export function emptyCounters(): JobCounters {
  return {
    total: 0,
    running: 0,
    waiting: 0,
    staging: 0,
    suspended: 0,
    preLrmsWaiting: 0,
    usedSlots: 0,
    requestedSlots: 0,
  };
}

export function tallyJobs(jobs: Iterable<JobTallyEntry>): JobTally {
  const all = emptyCounters();
  const byQueue = new Map<string, JobCounters>();
  const byRoute = new Map<string, JobCounters>();
  const of = (m: Map<string, JobCounters>, key: string): JobCounters => {
    let c = m.get(key);
    if (!c) m.set(key, (c = emptyCounters()));
    return c;
  };
  for (const j of jobs) {
    count(all, j);
    if (j.queue !== undefined) {
      count(of(byQueue, j.queue), j);
      if (j.route !== undefined) count(of(byRoute, routeShareKey(j.route, j.queue)), j);
    }
  }
  return { all, byQueue, byRoute };
}

function count(c: JobCounters, j: JobTallyEntry): void {
  const slots = j.slots !== undefined && Number.isFinite(j.slots) && j.slots >= 1 ? Math.trunc(j.slots) : 1;
  switch (j.gmState) {
    case 'FINISHED':
    case 'DELETED':
      return;
    case 'ACCEPTED':
      c.total++;
      c.preLrmsWaiting++;
      c.requestedSlots += slots;
      return;
    case 'PREPARING':
    case 'SUBMIT':
      c.total++;
      c.staging++;
      c.requestedSlots += slots;
      return;
    case 'FINISHING':
    case 'CANCELING':
      c.total++;
      c.staging++;
      return;
    case 'INLRMS':
      c.total++;
      // Pending INLRMS = done in the batch system, waiting for post-staging.
      if (j.pending) {
        c.staging++;
        return;
      }
      switch (j.lrmsState) {
        case 'R':
          c.running++;
          c.usedSlots += slots;
          return;
        case 'S':
          c.suspended++;
          return;
        case 'Q':
          c.waiting++;
          c.requestedSlots += slots;
          return;
        default:
          return;
      }
  }
}
