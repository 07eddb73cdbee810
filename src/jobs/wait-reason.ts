/**
 * Why a job waits (docs/routes.md, "Why a job waits"): one text for the info document
 * (GLUE2 OtherMessages), the web job page and `ceres admin show`. It names the first thing
 * that holds the job, with the limit's configuration key and value: a route's own limits
 * first (they hold a job even with free slots), then the service's and the user's; none
 * reached, the job waits for its turn in the fair share. Before the batch system: waiting
 * for the client's uploads or a staging slot. In the batch system: its batch state and the
 * batch system's own reason (Slurm's `Reason`), as stored with the job.
 *
 * Cheap: the function reads the record, the configuration and counts (WaitCounts) that are
 * read once per request, never counted per job: in the service the engine's own counters
 * (Scheduler.waitCounts, a map read each), in `ceres admin show` one statement
 * (countsFromRows). A reason names counts only, the route and the job's own VO and owner:
 * never another user's job or identity.
 */
import type { Config } from '../config/schema.js';
import type { JobRecord } from '../store/job-record.js';
import type { ActiveJobCount } from '../store/wait-counts.js';
import { jobClassOf, voOf } from '../engine/scheduler/share-chooser.js';

/** What the reasons count, read once per request. */
export interface WaitCounts {
  /** Jobs in the batch system (SUBMIT, INLRMS not pending): all of them, and one owner's. */
  readonly inBatch: number;
  inBatchOf(owner: string): number;
  /** Of one route (and one VO within it); undefined: not counted (an engine without fair share: none holds). */
  inBatchOfRoute(route: string, vo?: string): number | undefined;
  /** Jobs in stage-in (engine.maxPreparingJobs), and one owner's jobs picked up and not ended (engine.maxJobsPerUser). */
  readonly preparing: number;
  activeOf(owner: string): number;
  /** Whether the job waits for its client's uploads; absent: not known (a process without the engine). */
  waitsForUploads?(id: string): boolean;
  /**
   * Jobs being submitted to the batch system (handed over, not yet answered) and their
   * bound (0: none; twice the backend's concurrent submissions); absent: not known.
   */
  readonly submitting?: { readonly n: number; readonly limit: number };
  /** The stager's stage-in job slots: taken, jobs waiting for one, and the limit; absent: not known. */
  readonly stageInSlots?: { readonly active: number; readonly queued: number; readonly limit: number };
}

/** What of a job its reason reads: fixed while its record's version is. */
export type WaitJob = Pick<
  JobRecord,
  'id' | 'owner' | 'state' | 'pending' | 'lrmsState' | 'batchReason' | 'route' | 'fqans' | 'restState'
>;
type Job = WaitJob;

/** The fields of `j` its reason reads, copied (kept beside a written document). */
export function waitJobOf(j: WaitJob): WaitJob {
  const { id, owner, state, pending, lrmsState, batchReason, route, fqans, restState } = j;
  return { id, owner, state, pending, lrmsState, batchReason, route, fqans, restState };
}
type Limits = Pick<Config, 'engine' | 'routes' | 'fairShare'>;

/**
 * Whether the job's reason may change while its record does not (it depends on other
 * jobs, the engine or the configuration): such a job's document is never kept as written.
 */
export function waitReasonIsLive(j: Pick<JobRecord, 'state' | 'pending'>): boolean {
  return j.pending || j.state === 'ACCEPTED' || j.state === 'PREPARING';
}

export function waitReason(j: Job, config: Limits, n: WaitCounts): string | undefined {
  const e = config.engine;
  switch (j.state) {
    case 'ACCEPTED':
      if (!j.pending)
        return e.maxActiveJobs > 0 ? `waiting to be taken up (engine.maxActiveJobs ${e.maxActiveJobs})` : undefined;
      if (e.maxPreparingJobs > 0 && n.preparing >= e.maxPreparingJobs)
        return `waiting to start preparing: engine.maxPreparingJobs ${e.maxPreparingJobs} reached`;
      if (e.maxJobsPerUser > 0 && n.activeOf(j.owner) >= e.maxJobsPerUser)
        return `held by engine.maxJobsPerUser ${e.maxJobsPerUser} (${n.activeOf(j.owner)} of this user's jobs active)`;
      return 'waiting for its turn to start preparing';
    case 'PREPARING':
      return j.pending ? heldBeforeBatch(j, config, n) : preparing(j, n);
    case 'INLRMS':
      if (j.pending) return `waiting for a stage-out slot: engine.maxFinishingJobs ${e.maxFinishingJobs} reached`;
      if (j.lrmsState === null || j.lrmsState === 'RUNNING') return undefined;
      return j.batchReason === null
        ? `in the batch system: ${j.lrmsState}`
        : `in the batch system: ${j.lrmsState}, the batch system's reason: ${j.batchReason}`;
    default:
      return undefined;
  }
}

function preparing(j: Job, n: WaitCounts): string {
  if (n.waitsForUploads === undefined)
    return 'preparing: its input files are being downloaded or uploaded by the client';
  if (n.waitsForUploads(j.id)) return 'waiting for its input files to be uploaded by the client';
  const s = n.stageInSlots;
  return s !== undefined && s.queued > 0 && s.active >= s.limit
    ? `preparing: downloading its input files, or waiting for a staging slot (staging.maxJobsStagingIn ${s.limit}, ${s.queued} jobs waiting for one)`
    : 'preparing: downloading its input files';
}

/** A job staged in, held back from the batch system (PENDING:PREPARING, REST PREPARED). */
function heldBeforeBatch(j: Job, config: Limits, n: WaitCounts): string {
  const e = config.engine;
  const cls = jobClassOf(j);
  const route = config.routes.find((r) => r.name === cls.route);
  if (route?.maxRunning !== undefined) {
    const k = n.inBatchOfRoute(cls.route);
    if (k !== undefined && k >= route.maxRunning)
      return `held by route ${cls.route} maxRunning ${route.maxRunning} (${k} in the batch system)`;
  }
  if (route?.maxRunningPerVo !== undefined) {
    const k = n.inBatchOfRoute(cls.route, cls.vo);
    if (k !== undefined && k >= route.maxRunningPerVo)
      return `held by route ${cls.route} maxRunningPerVo ${route.maxRunningPerVo} for VO ${cls.vo || '(none)'} (${k} in the batch system)`;
  }
  if (e.maxRunningJobs > 0 && n.inBatch >= e.maxRunningJobs)
    return `waiting for a batch slot: engine.maxRunningJobs ${e.maxRunningJobs} reached`;
  const mine = n.inBatchOf(j.owner);
  if (e.maxRunningJobsPerUser > 0 && mine >= e.maxRunningJobsPerUser)
    return `held by engine.maxRunningJobsPerUser ${e.maxRunningJobsPerUser} (${mine} of this user's in the batch system)`;
  const s = n.submitting;
  if (s !== undefined && s.limit > 0 && s.n >= s.limit)
    return `waiting for its turn (fairShare.by ${config.fairShare.by}): ${s.n} jobs being submitted to the batch system, at most ${s.limit} at once`;
  return `waiting for its turn (fairShare.by ${config.fairShare.by})`;
}

/**
 * The counts from the stored jobs (store/wait-counts.ts: one grouped statement), for a
 * process without the engine (`ceres admin show`).
 */
export function countsFromRows(rows: readonly ActiveJobCount[]): WaitCounts {
  const inBatchOf = new Map<string, number>();
  const ofRoute = new Map<string, number>();
  const activeOf = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, by: number): void => void m.set(k, (m.get(k) ?? 0) + by);
  let inBatch = 0;
  let preparing = 0;
  for (const r of rows) {
    const batch = r.state === 'SUBMIT' || (r.state === 'INLRMS' && !r.pending);
    if (batch) {
      inBatch += r.n;
      add(inBatchOf, r.owner, r.n);
      add(ofRoute, r.route, r.n);
      add(ofRoute, `${r.route}\u0000${voOf(r.firstFqan)}`, r.n);
    }
    if (r.state === 'PREPARING' && !r.pending) preparing += r.n;
    // As the engine counts a user's jobs (slots.ts): picked up and not ended.
    if (r.state !== 'ACCEPTED') add(activeOf, r.owner, r.n);
  }
  return {
    inBatch,
    inBatchOf: (o) => inBatchOf.get(o) ?? 0,
    inBatchOfRoute: (route, vo) => ofRoute.get(vo === undefined ? route : `${route}\u0000${vo}`) ?? 0,
    preparing,
    activeOf: (o) => activeOf.get(o) ?? 0,
  };
}
