/**
 * The command's side of admin-requests.ts: record the requests, then wait (polling the
 * rows, up to `waitMs`) for the running service to answer each. When no service runs on
 * the state directory the requests stay recorded and are carried out at its next start.
 */
import type { Db } from '../store/database.js';
import { AdminRequests, type AdminAction } from './admin-requests.js';

export interface RequestOutcome {
  readonly target: string;
  /** HTTP-like status of the result (202 queued for the engine, 404, 409, ...); null: not answered yet. */
  readonly status: number | null;
  readonly reason: string;
}

export async function requestAndWait(
  db: Db,
  action: AdminAction,
  targets: readonly string[],
  o: { by: string; serviceRunning: boolean; waitMs: number },
): Promise<RequestOutcome[]> {
  const requests = new AdminRequests(db);
  const ids = requests.enqueue(action, targets, o.by);
  const deadline = Date.now() + (o.serviceRunning ? o.waitMs : 0);
  for (;;) {
    const rows = ids.map((id) => requests.get(id)!);
    if (rows.every((r) => r.doneAt !== null) || Date.now() >= deadline) {
      return rows.map((r) => ({
        target: r.target,
        status: r.status,
        reason:
          r.reason ??
          (o.serviceRunning
            ? 'recorded; the service has not answered yet (it will carry it out)'
            : 'recorded; the service is not running: carried out when it starts'),
      }));
    }
    await new Promise((res) => setTimeout(res, 100));
  }
}
