/**
 * The per-job update chain every backend delivers through: a job's updates reach the
 * listener one at a time and in the order they were queued (a final update never
 * overtakes the state before it), nothing is delivered before the caller has seen
 * submit() resolve, and once its final update is being delivered the job is no longer
 * the backend's (dropped from its table, so a reused local id starts afresh).
 */
import type { BatchUpdate, BatchUpdateListener } from '../backend.js';
import type { BackendLog } from './backend-log.js';

export interface ChainedJob {
  readonly localId: string;
  readonly jobId: string;
  chain: Promise<void>;
}

/** The start of a new job's chain: the first update waits for the current event-loop turn (submit's resolution). */
export const chainStart = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface UpdateTarget<J extends ChainedJob> {
  /** Names the backend in log lines. */
  readonly name: string;
  readonly jobs: Map<string, J>;
  listener(): BatchUpdateListener | undefined;
  closed(): boolean;
  log(): BackendLog | undefined;
}

/** Queue `update` behind the job's earlier ones; a failing listener is logged, the chain goes on. */
export function queueUpdate<J extends ChainedJob>(target: UpdateTarget<J>, job: J, update: BatchUpdate): void {
  job.chain = job.chain.then(async () => {
    if (update.kind === 'final' && target.jobs.get(job.localId) === job) target.jobs.delete(job.localId);
    const listener = target.listener();
    if (target.closed() || listener === undefined) return;
    try {
      await listener(job.localId, update);
    } catch (e) {
      target
        .log()
        ?.warn(
          { err: e, job: job.jobId, localId: job.localId, update: update.kind },
          `${target.name} backend: update listener failed`,
        );
    }
  });
}
