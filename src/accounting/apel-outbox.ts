/**
 * The messages for APEL, made durable before they are sent: the records not yet in a
 * message are built into messages, which are stored (table apel_outbox) in the same
 * transaction that notes on each record the message carrying it. The sender then takes
 * the oldest unsent message, and marks it sent only after the messaging service
 * acknowledged it. So a record counts as sent only after its acknowledgement, nothing is
 * lost however the service stops (a kill -9 at any moment leaves either the records
 * unqueued or their message unsent), and since one message is in flight at a time, a
 * crash between the service's answer and the mark repeats that one message only.
 * A repeat is harmless: a job record is keyed at APEL on (MachineName, LocalJobId,
 * EndTime), and a month's summaries (and sync records) replace those sent before.
 *
 * Summaries are built from every record of the month, not only the new ones, as APEL
 * replaces a whole month with what it receives: one month per call, so a backlog of
 * months (a first start, a republish) is worked through in slices.
 */
import type { Db } from '../store/database.js';
import { fromRow, type AccountingRow } from './record.js';
import { apelMessage, summaryRecords, syncRecord, SUMMARY_HEADER, SYNC_HEADER } from './apel.js';
import { INDIVIDUAL_HEADER, jobRecord, type IndividualOptions } from './apel-individual.js';

export interface OutboxOptions extends IndividualOptions {
  readonly messages: 'summaries' | 'individual';
  /** Records (summary or job records) per message at most. */
  readonly batchSize: number;
  readonly now?: () => number;
}

export type MessageKind = 'summary' | 'individual' | 'sync';

export interface OutboxMessage {
  readonly id: number;
  readonly kind: MessageKind;
  readonly body: string;
  /** APEL records in the message (summary, job or sync records). */
  readonly records: number;
  readonly createdAt: number;
  /** Failed sends so far. */
  readonly attempts: number;
}

/** A message stays well below the messaging service's 1 MB once signed and base64-encoded. */
export const MAX_MESSAGE_BYTES = 700_000;
/** Job-record messages made per call: a backlog is queued in slices between sends. */
const MESSAGES_PER_CALL = 20;

/** [first ms, end ms) of the UTC month of `t`. */
export function monthOf(t: number): { start: number; end: number } {
  const d = new Date(t);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** Consecutive groups of at most `batchSize` items whose texts stay under `maxBytes` (one item may stand alone). */
export function pack<T>(items: readonly T[], size: (t: T) => number, batchSize: number, maxBytes: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let bytes = 0;
  for (const it of items) {
    const n = size(it) + 1;
    if (cur.length > 0 && (cur.length >= batchSize || bytes + n > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(it);
    bytes += n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

export class ApelOutbox {
  readonly #db: Db;
  readonly #o: OutboxOptions;
  readonly #s;

  constructor(db: Db, o: OutboxOptions) {
    this.#db = db;
    this.#o = o;
    this.#s = {
      unqueued: db.prepare(
        'SELECT * FROM accounting_records WHERE apel_message IS NULL ORDER BY ended_at, job_id LIMIT ?',
      ),
      firstUnqueued: db
        .prepare('SELECT ended_at FROM accounting_records WHERE apel_message IS NULL ORDER BY ended_at, job_id LIMIT 1')
        .pluck(),
      between: db.prepare('SELECT * FROM accounting_records WHERE ended_at >= ? AND ended_at < ?'),
      counts: db.prepare(
        'SELECT endpoint AS host, COUNT(*) AS n FROM accounting_records WHERE ended_at >= ? AND ended_at < ? GROUP BY endpoint ORDER BY endpoint',
      ),
      insert: db.prepare('INSERT INTO apel_outbox (kind, body, records, created_at) VALUES (?, ?, ?, ?)'),
      mark: db.prepare('UPDATE accounting_records SET apel_message = ? WHERE job_id = ? AND ended_at = ?'),
      markMonth: db.prepare(
        'UPDATE accounting_records SET apel_message = ? WHERE apel_message IS NULL AND ended_at >= ? AND ended_at < ?',
      ),
      next: db.prepare(
        'SELECT id, kind, body, records, created_at AS createdAt, attempts FROM apel_outbox WHERE sent_at IS NULL ORDER BY id LIMIT 1',
      ),
      nextAfter: db.prepare(
        'SELECT id, kind, body, records, created_at AS createdAt, attempts FROM apel_outbox WHERE sent_at IS NULL AND id > ? ORDER BY id LIMIT 1',
      ),
      sent: db.prepare(
        'UPDATE apel_outbox SET sent_at = ?, message_id = ?, body = NULL WHERE id = ? AND sent_at IS NULL',
      ),
      failed: db.prepare('UPDATE apel_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?'),
      unqueuedCount: db.prepare('SELECT COUNT(*) FROM accounting_records WHERE apel_message IS NULL').pluck(),
      unsentCount: db.prepare('SELECT COUNT(*) FROM apel_outbox WHERE sent_at IS NULL').pluck(),
    };
  }

  /**
   * Builds the next slice of unqueued records into stored messages (one transaction);
   * returns how many messages and job records it queued (0 messages: nothing left).
   */
  queueNext(): { messages: number; records: number } {
    return this.#db.transaction(() =>
      this.#o.messages === 'individual' ? this.#queueJobRecords() : this.#queueMonthSummaries(),
    )();
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  #insert(kind: MessageKind, header: string, records: readonly string[]): number {
    return Number(this.#s.insert.run(kind, apelMessage(header, records), records.length, this.#now()).lastInsertRowid);
  }

  /** The sync message of a month: jobs per endpoint, counted over every record of the month. */
  #insertSync(month: { start: number; end: number }): number {
    const d = new Date(month.start);
    const counts = this.#s.counts.all(month.start, month.end) as { host: string; n: number }[];
    const records = counts.map((c) =>
      syncRecord({ host: c.host, n: c.n, month: d.getUTCMonth() + 1, year: d.getUTCFullYear() }, this.#o),
    );
    return this.#insert('sync', SYNC_HEADER, records);
  }

  #queueJobRecords(): { messages: number; records: number } {
    const o = this.#o;
    const rows = this.#s.unqueued.all(o.batchSize * MESSAGES_PER_CALL) as AccountingRow[];
    if (rows.length === 0) return { messages: 0, records: 0 };
    const built = rows.map((row) => ({ row, text: jobRecord(fromRow(row), o) }));
    const groups = pack(built, (b) => Buffer.byteLength(b.text), o.batchSize, MAX_MESSAGE_BYTES);
    const months = new Map<number, { start: number; end: number }>();
    for (const g of groups) {
      const id = this.#insert(
        'individual',
        INDIVIDUAL_HEADER,
        g.map((b) => b.text),
      );
      for (const b of g) {
        this.#s.mark.run(id, b.row.job_id, b.row.ended_at);
        const m = monthOf(b.row.ended_at);
        months.set(m.start, m);
      }
    }
    for (const m of months.values()) this.#insertSync(m);
    return { messages: groups.length + months.size, records: rows.length };
  }

  #queueMonthSummaries(): { messages: number; records: number } {
    const first = this.#s.firstUnqueued.get() as number | undefined;
    if (first === undefined) return { messages: 0, records: 0 };
    const month = monthOf(first);
    const rows = this.#s.between.all(month.start, month.end) as AccountingRow[];
    const blocks = summaryRecords(rows.map(fromRow), this.#o);
    const groups = pack(blocks, (b) => Buffer.byteLength(b), this.#o.batchSize, MAX_MESSAGE_BYTES);
    for (const g of groups) this.#insert('summary', SUMMARY_HEADER, g);
    // The month's records are carried by its last message: all of them are sent (in
    // order) when it is.
    const last = this.#insertSync(month);
    const marked = this.#s.markMonth.run(last, month.start, month.end).changes;
    return { messages: groups.length + 1, records: marked };
  }

  /** The oldest unsent message. */
  next(): OutboxMessage | undefined {
    return this.#s.next.get() as OutboxMessage | undefined;
  }

  /** The unsent message after message `id`. */
  nextAfter(id: number): OutboxMessage | undefined {
    return this.#s.nextAfter.get(id) as OutboxMessage | undefined;
  }

  /** The messaging service acknowledged message `id` (its id there: `messageId`). */
  markSent(id: number, messageId: string): void {
    this.#s.sent.run(this.#now(), messageId, id);
  }

  noteFailure(id: number, error: string): void {
    this.#s.failed.run(error.slice(0, 1000), id);
  }

  /** Records not yet in a message, and messages not yet acknowledged. */
  backlog(): { unqueuedRecords: number; unsentMessages: number } {
    return {
      unqueuedRecords: this.#s.unqueuedCount.get() as number,
      unsentMessages: this.#s.unsentCount.get() as number,
    };
  }
}

/**
 * `ceres accounting republish`: the records that ended in [fromMs, toMs) are queued
 * again (their months again, in summaries mode) and sent by the running service.
 * Returns how many records that is.
 */
export function republish(db: Db, fromMs: number, toMs: number): number {
  return db
    .prepare('UPDATE accounting_records SET apel_message = NULL WHERE ended_at >= ? AND ended_at < ?')
    .run(fromMs, toMs).changes;
}

/** The `empaid` attribute of a message: the day and time it was made, and its number (the same on a repeat). */
export function empaId(m: Pick<OutboxMessage, 'id' | 'createdAt'>): string {
  const t = new Date(m.createdAt).toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${t.slice(0, 8)}/${t}-${m.id}`;
}
