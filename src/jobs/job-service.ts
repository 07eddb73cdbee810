/**
 * Jobs as the REST interface sees them: submission, listing and the bulk actions,
 * always scoped to the caller (a job of another user is indistinguishable from a
 * missing one). The engine does the work; this service records requests durably and
 * pokes the engine.
 */
import { ceError } from '../errors/ce-error.js';
import { monitors as monitorsVo } from '../authz/monitors.js';
import type { JobStore, NewJob } from '../store/job-store.js';
import { GroupCommit } from '../store/group-commit.js';
import type { JobRecord } from '../store/job-record.js';
import type { JobListQuery, ListedJob } from '../store/job-list.js';
import { newJobId } from './job-id.js';
import type { DelegationPort, DescriptionPort, EnginePort, ItemFailure } from './ports.js';
import type { JobDescription } from '../vocabulary/job-description.js';
import { chooseRoute, jobRoute, routeFacts, type JobRoute, type Route } from './routes.js';
import { addInFlight, RouteWaiting } from './route-limits.js';
import { voOf } from '../engine/scheduler/share-chooser.js';
import { SESSION_NOT_MADE, type SessionDirs } from '../sessions/session-dirs.js';

export interface SubmitOptions {
  /** The owner as shown and accounted (the one-line DN); absent: the owner key itself. */
  readonly ownerDn?: string | undefined;
  readonly queue?: string | undefined;
  readonly delegationId?: string | undefined;
  readonly instances?: number | undefined;
  readonly instancesMin?: number | undefined;
  readonly clientHost?: string | undefined;
  /** The caller's mapped local account (src/authz), recorded with each job. */
  readonly localAccount?: string | undefined;
  /** The caller's verified VOMS FQANs, recorded with each job. */
  readonly fqans?: readonly string[] | undefined;
  /** Queues the caller may use; an item for another queue fails with 403. Absent: all. */
  readonly queues?: readonly string[] | undefined;
  /** The caller's authorization groups, named when a queue is not open to them. */
  readonly groups?: readonly string[] | undefined;
  /** A token caller's `wlcg.groups` and scopes, for the routes. */
  readonly tokenGroups?: readonly string[] | undefined;
  readonly tokenScopes?: readonly string[] | undefined;
}

export interface ItemResult {
  readonly status: number;
  readonly reason: string;
  /** A refused item's catalog code (src/errors/codes), as error documents carry it. */
  readonly code?: string;
  /** A refused item's line in the submitted body, where the parser knew it (the web shows it; REST does not). */
  readonly line?: number;
  readonly id?: string;
  readonly state?: string;
}

export interface JobServiceOptions {
  readonly store: JobStore;
  readonly descriptions: DescriptionPort;
  readonly delegations: DelegationPort;
  readonly engine: EnginePort;
  readonly sessions: Pick<SessionDirs, 'pathOf'>;
  readonly maxInstances: number;
  readonly maxRerun: number;
  /** Most jobs of one owner that have not ended; items over it are refused (0 or absent: no limit). */
  readonly maxActivePerUser?: number;
  readonly initialState: { state: string; restState: string };
  readonly now?: () => number;
  /** Why submissions to a queue (undefined: any) are refused now (a drain), or undefined. */
  readonly draining?: (queue?: string) => string | undefined;
  /** The configured routes, read per submission (reloadable); absent or empty: no routing. */
  readonly routes?: () => readonly Route[];
  /** Told of each submission's item results once they are final (log lines, metrics). */
  readonly onSubmitted?: (owner: string, results: readonly ItemResult[]) => void;
}

export class JobService {
  readonly #o: JobServiceOptions;
  readonly #now: () => number;
  readonly #commit: GroupCommit;
  /** Jobs of each owner being created (counted, not yet committed): concurrent submissions see them. */
  readonly #creating = new Map<string, number>();
  /** Places of routes' waiting limits taken by submissions being stored (route-limits.ts). */
  readonly #routePlaces = new Map<string, number>();

  constructor(o: JobServiceOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.#commit = new GroupCommit(o.store);
  }

  /** How many more jobs `owner` may create now (Infinity without a limit). */
  #room(owner: string): number {
    const max = this.#o.maxActivePerUser ?? 0;
    if (max === 0) return Infinity;
    return max - this.#o.store.countActive(owner) - (this.#creating.get(owner) ?? 0);
  }

  /** Where the job's session directory was made (tests; access goes through SessionDirs). */
  sessionDir(id: string): string {
    return this.#o.sessions.pathOf(id);
  }

  /**
   * The caller's job, or a 404 CeError; a 403 when the caller only monitors it (`monitors`:
   * the VOs it monitors, src/authz/monitors.ts): its files are not a monitor's to read.
   */
  visible(owner: string, id: string, monitors?: readonly string[]): JobRecord {
    const j = this.#o.store.getOwned(id, owner);
    if (j) return j;
    throw ceError(this.onlyMonitors(monitors, id) ? 'CE_ERR_JOB_MONITOR_READ_ONLY' : 'CE_ERR_JOB_NOT_FOUND');
  }

  /** Whether `id`, not the caller's, is a job of a VO in `monitors` (the caller only monitors it). */
  onlyMonitors(monitors: readonly string[] | undefined, id: string): boolean {
    return monitors !== undefined && monitors.length > 0 && monitorsVo({ monitors }, this.#o.store.voOf(id));
  }

  list(owner: string, restStates?: readonly string[]): { id: string; state: string }[] {
    return this.#o.store.listByOwner(owner, restStates);
  }

  /**
   * GET jobs with the extension's filters or a page size (docs/compatibility.md): the
   * query's owner's jobs or, for a monitor, its VO's (the caller checked the role).
   */
  listFiltered(q: JobListQuery): ListedJob[] {
    return this.#o.store.listFiltered(q);
  }

  /**
   * POST jobs?action=new. One result per description, in order; a bad item never
   * affects the others. All accepted items are stored in one durable transaction
   * (shared with concurrent submissions, see GroupCommit) before this returns, so the
   * 201 that follows is never a lie.
   */
  async submit(owner: string, body: Buffer, opts: SubmitOptions): Promise<ItemResult[]> {
    const drained = this.#o.draining?.();
    if (drained !== undefined) throw ceError('CE_ERR_JOB_DRAINING', drained);
    const { multi, items: parsed } = this.#o.descriptions.split(body);
    const instances = opts.instances ?? 1;
    const instancesMin = opts.instancesMin ?? 1;
    if (
      !Number.isInteger(instances) ||
      !Number.isInteger(instancesMin) ||
      instances < 1 ||
      instancesMin < 1 ||
      instancesMin > instances
    ) {
      throw ceError('CE_ERR_JOB_BAD_INSTANCES');
    }
    if (instances > 1 && multi) throw ceError('CE_ERR_JOB_INSTANCES_WITH_BULK');
    if (instancesMin > this.#o.maxInstances)
      throw ceError('CE_ERR_JOB_TOO_MANY_INSTANCES', `at most ${this.#o.maxInstances} instances per request`);
    let copies = Math.min(instances, this.#o.maxInstances);
    // Per-user active cap, checked and reserved synchronously (no await until the
    // reservation is taken), so concurrent submissions of one user never over-admit.
    const room = this.#room(owner);
    if (instances > 1) {
      // A-REX's rule for its job limit: instances_min must fit, instances is trimmed to what does.
      if (instancesMin > room)
        throw ceError(
          'CE_ERR_JOB_TOO_MANY_INSTANCES',
          `${noMoreJobs(this.#o.maxActivePerUser ?? 0)}; room for ${Math.max(0, room)}`,
        );
      copies = Math.min(copies, room);
    }

    // A drain is read from the database (one query): once per queue and request, not per
    // item (a 1,000-job POST asked 1,000 times). It applies from the next request on.
    const drains = new Map<string | undefined, string | undefined>();
    const drainOf = (queue: string | undefined): string | undefined => {
      if (!drains.has(queue)) drains.set(queue, this.#o.draining?.(queue));
      return drains.get(queue);
    };
    const routeWaiting = new RouteWaiting(this.#o.store, this.#routePlaces);
    const results: ItemResult[] = [];
    const toCreate: NewJob[] = [];
    const now = this.#now();
    for (const item of parsed) {
      if (!item.ok) {
        results.push(refused(item));
        continue;
      }
      if (toCreate.length + copies > room) {
        results.push({ status: 503, reason: noMoreJobs(this.#o.maxActivePerUser ?? 0) });
        continue;
      }
      const acc = this.#o.descriptions.accept(item.description, {
        queue: opts.queue,
        delegationId: opts.delegationId,
        authorisedQueues: opts.queues,
        callerGroups: opts.groups,
      });
      if (!acc.ok) {
        results.push(refused(acc));
        continue;
      }
      const desc = acc.description;
      const queueDrained = drainOf(desc.queue);
      if (queueDrained !== undefined) {
        results.push({ status: 503, reason: queueDrained, code: 'CE_ERR_JOB_DRAINING' });
        continue;
      }
      const routed = routeOf(this.#o.routes?.() ?? [], desc, opts);
      if (routed !== undefined && !routed.ok) {
        results.push(refused(routed));
        continue;
      }
      const delegs = delegationIdsOf(desc);
      const foreign = delegs.find((d) => !this.#o.delegations.ownedBy(d, owner));
      if (foreign !== undefined) {
        results.push({
          status: 404,
          reason: `Delegation ${foreign.slice(0, 64)} not found`,
          code: 'CE_ERR_DELEG_NOT_FOUND',
        });
        continue;
      }
      // The route's waiting limits, last: a place is taken only for an item that is made.
      // Instances are trimmed to the room left, as for the per-user limit.
      let made = copies;
      if (routed !== undefined) {
        const placed = routeWaiting.take(routed.config, voOf(opts.fqans?.[0]), copies, Math.min(copies, instancesMin));
        if (!placed.ok) {
          results.push(refused(placed));
          continue;
        }
        made = placed.n;
      }
      for (let i = 0; i < made; i++) {
        const id = newJobId();
        toCreate.push({
          id,
          owner,
          ownerDn: opts.ownerDn ?? owner,
          state: this.#o.initialState.state,
          restState: this.#o.initialState.restState,
          queue: desc.queue ?? '',
          delegationId: desc.delegationId ?? null,
          delegationIds: delegs,
          format: desc.sourceFormat,
          description: desc,
          raw: item.text,
          createdAt: now,
          rerunsLeft: Math.min(desc.rerun ?? 0, this.#o.maxRerun),
          clientHost: opts.clientHost ?? null,
          localAccount: opts.localAccount ?? null,
          fqans: opts.fqans ?? null,
          route: routed?.route ?? null,
          name: desc.jobName ?? '',
          // Made on first use, as the job's account (src/sessions/session-dirs.ts).
          sessionIdent: SESSION_NOT_MADE,
        });
        results.push({ status: 201, reason: 'Created', id, state: this.#o.initialState.restState });
      }
    }
    if (toCreate.length === 0) {
      this.#o.onSubmitted?.(owner, results);
      return results;
    }
    this.#creating.set(owner, (this.#creating.get(owner) ?? 0) + toCreate.length);
    addInFlight(this.#routePlaces, routeWaiting.taken, 1);
    try {
      await this.#commit.insert(toCreate);
    } finally {
      const left = (this.#creating.get(owner) ?? 0) - toCreate.length;
      if (left > 0) this.#creating.set(owner, left);
      else this.#creating.delete(owner);
      addInFlight(this.#routePlaces, routeWaiting.taken, -1);
    }
    this.#o.engine.jobsSubmitted(toCreate.map((j) => j.id));
    this.#o.onSubmitted?.(owner, results);
    return results;
  }
}

/**
 * The route of one accepted description: undefined without routes; with routes, the
 * first that takes it, or a 403 item naming why each route did not.
 */
function routeOf(
  routes: readonly Route[],
  desc: JobDescription,
  opts: SubmitOptions,
): { readonly ok: true; readonly route: JobRoute; readonly config: Route } | ItemFailure | undefined {
  if (routes.length === 0) return undefined;
  const decision = chooseRoute(routes, routeFacts(desc, opts));
  if (decision.route !== undefined) return { ok: true, route: jobRoute(decision.route), config: decision.route };
  const why = decision.misses.map((m) => `${m.name}: ${m.why}`).join('; ');
  return {
    ok: false,
    status: 403,
    code: 'CE_ERR_JOB_NO_ROUTE',
    reason: `No configured route takes this job (${why.length > 400 ? `${why.slice(0, 400)}...` : why})`,
  };
}

/** A-REX's reason for a job limit, with the limit. */
function noMoreJobs(max: number): string {
  return `No more jobs allowed: at most ${max} active jobs per user`;
}

/** The main delegation and every per-file one, deduplicated, in order. */
export function delegationIdsOf(desc: JobDescription): string[] {
  const out = new Set<string>();
  if (desc.delegationId) out.add(desc.delegationId);
  for (const f of desc.inputFiles ?? []) if (f.delegationId) out.add(f.delegationId);
  for (const f of desc.outputFiles ?? []) if (f.delegationId) out.add(f.delegationId);
  return [...out];
}

/** A refused item as answered: its status, reason and, when it has one, its code. */
function refused(f: ItemFailure): ItemResult {
  return {
    status: f.status,
    reason: f.reason,
    ...(f.code !== undefined ? { code: f.code } : {}),
    ...(f.line !== undefined ? { line: f.line } : {}),
  };
}
