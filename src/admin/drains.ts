/**
 * Draining (`ceres admin drain` / `undrain`): a drained service or queue accepts no new
 * jobs and keeps running the ones it has. The state lives in the database (table
 * `drains`), so it survives restarts and the command works whether or not the service
 * runs; the service reads it at every submission and info-document build (one indexed
 * read of a table with a handful of rows), so a drain applies to the next request.
 */
import type { Db } from '../store/database.js';

/** The whole service (all queues). */
export const ALL_QUEUES = '';

export interface Drain {
  /** Queue name, or '' for the whole service. */
  readonly queue: string;
  readonly reason: string;
  readonly since: number;
  readonly by: string;
}

export class Drains {
  readonly #list;
  readonly #set;
  readonly #clear;
  readonly #clearAll;

  constructor(db: Db) {
    this.#list = db.prepare('SELECT queue, reason, since, by FROM drains ORDER BY queue');
    this.#set = db.prepare(
      'INSERT INTO drains (queue, reason, since, by) VALUES (@queue, @reason, @since, @by) ON CONFLICT (queue) DO UPDATE SET reason = excluded.reason, by = excluded.by',
    );
    this.#clear = db.prepare('DELETE FROM drains WHERE queue = ?');
    this.#clearAll = db.prepare('DELETE FROM drains');
  }

  list(): Drain[] {
    return this.#list.all() as Drain[];
  }

  drain(queue: string, reason: string, by: string, now = Date.now()): void {
    this.#set.run({ queue, reason, since: now, by });
  }

  /** Ends the drain of `queue` ('' = the whole-service drain); `all`: every drain. Returns how many ended. */
  undrain(queue: string, all = false): number {
    return (all ? this.#clearAll.run() : this.#clear.run(queue)).changes;
  }

  /**
   * Why a submission to `queue` is refused now, or undefined when it is accepted. A
   * whole-service drain applies to every queue.
   */
  refusal(queue?: string): string | undefined {
    const ds = this.list();
    const d =
      ds.find((x) => x.queue === ALL_QUEUES) ?? (queue !== undefined ? ds.find((x) => x.queue === queue) : undefined);
    if (d === undefined) return undefined;
    const what = d.queue === ALL_QUEUES ? 'the service is draining' : `queue ${d.queue} is draining`;
    return `${what} (no new jobs accepted; running jobs continue): ${d.reason}`;
  }
}
