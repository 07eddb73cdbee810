/**
 * The service's side of admin-requests.ts: looks for open requests every `intervalMs`
 * (and once at start, for requests made while the service was down) and carries them
 * out as the owner of the job or delegation would: the same bulk actions, the same
 * refusals (a kill of a finished job is a 409), the engine poked the same way. A
 * request for a job or delegation that does not exist is answered 404.
 */
import type { AdminRequests } from './admin-requests.js';
import type { JobActions } from '../jobs/job-actions.js';
import type { JobStore } from '../store/job-store.js';
import type { DelegationService } from '../delegations/delegation-service.js';
import { CeError } from '../errors/ce-error.js';

type BulkAction = (a: JobActions, owner: string, ids: string[]) => ReturnType<JobActions['kill']>;
const ACTIONS: Record<string, BulkAction | undefined> = {
  kill: (a, owner, ids) => a.kill(owner, ids),
  clean: (a, owner, ids) => a.clean(owner, ids),
  restart: (a, owner, ids) => a.restart(owner, ids),
};

export interface RequestPollerDeps {
  readonly requests: AdminRequests;
  readonly store: JobStore;
  readonly actions: JobActions;
  /** Owner of a delegation, or undefined when there is none. */
  readonly delegationOwner: (id: string) => string | undefined;
  readonly delegations: Pick<DelegationService, 'remove'>;
  readonly log: { info(o: object, m: string): void; warn(o: object, m: string): void };
  readonly intervalMs?: number;
}

export class RequestPoller {
  readonly #d: RequestPollerDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(d: RequestPollerDeps) {
    this.#d = d;
  }

  start(): void {
    this.#tick();
    this.#timer = setInterval(() => this.#tick(), this.#d.intervalMs ?? 500);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #tick(): void {
    if (this.#running) return;
    this.#running = this.#serve()
      .catch((e: unknown) => this.#d.log.warn({ err: e }, 'admin requests not served'))
      .finally(() => (this.#running = undefined));
  }

  async #serve(): Promise<void> {
    const { requests, log } = this.#d;
    for (const r of requests.open()) {
      const { status, reason } = await this.#carryOut(r.action, r.target);
      requests.complete(r.id, status, reason);
      log.info(
        { request: r.id, action: r.action, target: r.target, by: r.requestedBy, status, reason },
        'admin request',
      );
    }
  }

  async #carryOut(action: string, target: string): Promise<{ status: number; reason: string }> {
    const { store, actions } = this.#d;
    if (action === 'revoke-delegation') {
      const owner = this.#d.delegationOwner(target);
      if (owner === undefined) return { status: 404, reason: 'Delegation not found' };
      try {
        await this.#d.delegations.remove(owner, target);
        return { status: 200, reason: 'Delegation revoked' };
      } catch (e) {
        if (e instanceof CeError) return { status: e.statusCode, reason: e.message };
        throw e;
      }
    }
    const job = store.get(target);
    if (!job) return { status: 404, reason: 'Job not found' };
    const act = ACTIONS[action];
    if (!act) return { status: 400, reason: `unknown action ${action}` };
    const [item] = act(actions, job.owner, [target]);
    return { status: item!.status, reason: item!.reason };
  }
}
