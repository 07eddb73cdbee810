/**
 * Wiring of the operations parts for the composition root: drains (src/admin/drains.ts),
 * accounting records (src/accounting) and the admin requests the `ceres admin` command
 * leaves in the database for the running service (src/admin/admin-requests.ts).
 */
import type { Logger } from 'pino';
import type { Db } from '../store/database.js';
import type { JobStore } from '../store/job-store.js';
import type { JobRecord } from '../store/job-record.js';
import type { ControlDir } from '../store/control-dir.js';
import type { JobActions } from '../jobs/job-actions.js';
import type { DelegationService } from '../delegations/delegation-service.js';
import { Drains } from '../admin/drains.js';
import { AdminRequests } from '../admin/admin-requests.js';
import { RequestPoller } from '../admin/request-poller.js';
import { AccountingRecorder } from '../accounting/recorder.js';

/** Jobs read per slice of the accounting catch-up (a few tens of ms at a time). */
const CATCH_UP_PAGE = 20_000;

export interface OperationsDeps {
  readonly db: Db;
  readonly store: JobStore;
  readonly control: ControlDir;
  readonly log: Logger;
  readonly serviceUrl: () => string;
}

export interface OperationsWiring {
  readonly draining: (queue?: string) => string | undefined;
  readonly drainedQueues: () => string[];
  readonly onEnded: (job: JobRecord) => Promise<unknown>;
  /**
   * Record the runs that ended without their record (the service died in between), in
   * the background: the store is read in slices between requests, so a start with a
   * million stored jobs is not held up (records are keyed, so a run recorded meanwhile
   * by the engine is not written twice).
   */
  catchUp(): void;
  startRequests(d: { actions: JobActions; store: JobStore; delegations: Pick<DelegationService, 'remove'> }): void;
  stop(): Promise<void>;
}

export function createOperations(d: OperationsDeps): OperationsWiring {
  const log = d.log.child({ part: 'admin' });
  const drains = new Drains(d.db);
  const recorder = new AccountingRecorder({
    db: d.db,
    endpoint: d.serviceUrl,
    statistics: async (id) => (await d.control.read(id, 'statistics'))?.toString('utf8'),
  });
  const ownerOf = d.db.prepare('SELECT owner FROM delegations WHERE id = ?').pluck();
  let poller: RequestPoller | undefined;
  let catchingUp: Promise<void> = Promise.resolve();
  let stopped = false;
  return {
    draining: (queue) => drains.refusal(queue),
    drainedQueues: () => drains.list().map((x) => x.queue),
    onEnded: (job) => recorder.record(job),
    catchUp() {
      catchingUp = (async () => {
        let written = 0;
        for (let after: number | undefined = 0; after !== undefined && !stopped;) {
          const page = recorder.missingPage(after, CATCH_UP_PAGE);
          for (const id of page.ids) {
            const j = d.store.get(id);
            if (j && !stopped && (await recorder.record(j))) written++;
          }
          after = page.next;
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (written) log.info({ jobs: written }, 'accounting records written for runs that ended before the last stop');
      })().catch((e: unknown) =>
        log.error({ err: e }, 'accounting catch-up failed; the records are written at the next start'),
      );
    },
    startRequests(w) {
      poller = new RequestPoller({
        requests: new AdminRequests(d.db),
        store: w.store,
        actions: w.actions,
        delegations: w.delegations,
        delegationOwner: (id) => ownerOf.get(id) as string | undefined,
        log,
      });
      poller.start();
    },
    async stop() {
      stopped = true;
      await catchingUp;
      await poller?.stop();
    },
  };
}
