/**
 * Requests an administrator made from the command line that only the running engine may
 * carry out (kill, clean and restart of a job, revoking a delegation): the command
 * records them in the database (table `admin_requests`), the service picks them up
 * (request-poller.ts) and records each result, which the command waits for. A request
 * made while the service is down waits for its next start. Nothing but the service
 * process acts on jobs, so the engine's invariants (compare-and-set transitions, one
 * chain per job) hold unchanged.
 */
import type { Db } from '../store/database.js';

export type AdminAction = 'kill' | 'clean' | 'restart' | 'revoke-delegation';
export const ADMIN_ACTIONS: readonly AdminAction[] = ['kill', 'clean', 'restart', 'revoke-delegation'];

export interface AdminRequest {
  readonly id: number;
  readonly action: AdminAction;
  readonly target: string;
  readonly requestedBy: string;
  readonly requestedAt: number;
  readonly doneAt: number | null;
  readonly status: number | null;
  readonly reason: string | null;
}

const COLS =
  'id, action, target, requested_by AS requestedBy, requested_at AS requestedAt, done_at AS doneAt, status, reason';

export class AdminRequests {
  readonly #db: Db;
  readonly #insert;
  readonly #open;
  readonly #done;
  readonly #get;

  constructor(db: Db) {
    this.#db = db;
    this.#insert = db.prepare(
      'INSERT INTO admin_requests (action, target, requested_by, requested_at) VALUES (?, ?, ?, ?)',
    );
    this.#open = db.prepare(`SELECT ${COLS} FROM admin_requests WHERE done_at IS NULL ORDER BY id LIMIT ?`);
    this.#done = db.prepare(
      'UPDATE admin_requests SET done_at = ?, status = ?, reason = ? WHERE id = ? AND done_at IS NULL',
    );
    this.#get = db.prepare(`SELECT ${COLS} FROM admin_requests WHERE id = ?`);
  }

  /** Record one request per target, in one transaction; returns their ids in order. */
  enqueue(action: AdminAction, targets: readonly string[], by: string, now = Date.now()): number[] {
    return this.#db.transaction(() =>
      targets.map((t) => Number(this.#insert.run(action, t, by, now).lastInsertRowid)),
    )();
  }

  open(limit = 100): AdminRequest[] {
    return this.#open.all(limit) as AdminRequest[];
  }

  complete(id: number, status: number, reason: string, now = Date.now()): void {
    this.#done.run(now, status, reason, id);
  }

  get(id: number): AdminRequest | undefined {
    return this.#get.get(id) as AdminRequest | undefined;
  }
}
