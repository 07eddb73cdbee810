/**
 * Read-only questions the admin command asks the database about jobs, delegations and
 * the service, across all owners (the REST interface only ever shows a caller's own).
 */
import type { Db } from '../store/database.js';
import { fromRow, type JobRecord, type JobRow } from '../store/job-record.js';
import type { JobFilter } from './filters.js';

export interface JobLine {
  readonly id: string;
  readonly state: string;
  readonly queue: string;
  readonly owner: string;
  readonly localAccount: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export function listJobs(db: Db, f: JobFilter, now = Date.now()): JobLine[] {
  const where: string[] = [];
  const args: unknown[] = [];
  if (f.owner !== undefined) {
    where.push('instr(owner_dn, ?) > 0');
    args.push(f.owner);
  }
  if (f.states !== undefined) {
    where.push(`rest_state IN (${f.states.map(() => '?').join(',')})`);
    args.push(...f.states);
  }
  if (f.queue !== undefined) {
    where.push('queue = ?');
    args.push(f.queue);
  }
  if (f.olderThanMs !== undefined) {
    where.push('created_at <= ?');
    args.push(now - f.olderThanMs);
  }
  if (f.newerThanMs !== undefined) {
    where.push('created_at >= ?');
    args.push(now - f.newerThanMs);
  }
  const sql = `SELECT id, rest_state AS state, queue, owner_dn AS owner, local_account AS localAccount, created_at AS createdAt, updated_at AS updatedAt FROM jobs
    ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id LIMIT ?`;
  return db.prepare(sql).all(...args, f.limit) as JobLine[];
}

export function getJob(db: Db, id: string): JobRecord | undefined {
  const r = db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
  return r && fromRow(r);
}

export function jobDelegations(db: Db, id: string): string[] {
  return db
    .prepare('SELECT delegation_id FROM job_delegations WHERE job_id = ? ORDER BY delegation_id')
    .pluck()
    .all(id) as string[];
}

export interface DelegationLine {
  readonly id: string;
  readonly owner: string;
  readonly type: string;
  readonly expiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Jobs (any state) naming the delegation. */
  readonly jobs: number;
}

const DELEG = `SELECT d.id, d.owner, d.type, d.expires_at AS expiresAt, d.created_at AS createdAt, d.updated_at AS updatedAt,
  (SELECT count(*) FROM job_delegations jd WHERE jd.delegation_id = d.id) AS jobs FROM delegations d`;

export function listDelegations(db: Db, owner?: string): DelegationLine[] {
  return (
    owner === undefined
      ? db.prepare(`${DELEG} ORDER BY d.owner, d.id`).all()
      : db.prepare(`${DELEG} WHERE instr(d.owner, ?) > 0 ORDER BY d.owner, d.id`).all(owner)
  ) as DelegationLine[];
}

export function getDelegation(db: Db, id: string): DelegationLine | undefined {
  return db.prepare(`${DELEG} WHERE d.id = ?`).get(id) as DelegationLine | undefined;
}

export function delegationJobs(db: Db, id: string): string[] {
  return db
    .prepare('SELECT job_id FROM job_delegations WHERE delegation_id = ? ORDER BY job_id')
    .pluck()
    .all(id) as string[];
}

export interface ServiceCounts {
  readonly jobsByState: Record<string, number>;
  readonly jobsByQueue: Record<string, number>;
  readonly delegations: number;
  readonly accountingRecords: number;
  readonly openAdminRequests: number;
  readonly schemaVersion: number;
}

export function serviceCounts(db: Db): ServiceCounts {
  const byState: Record<string, number> = {};
  for (const r of db
    .prepare('SELECT rest_state AS s, count(*) AS n FROM jobs GROUP BY rest_state ORDER BY rest_state')
    .all() as { s: string; n: number }[])
    byState[r.s] = r.n;
  const byQueue: Record<string, number> = {};
  for (const r of db.prepare('SELECT queue AS q, count(*) AS n FROM jobs GROUP BY queue ORDER BY queue').all() as {
    q: string;
    n: number;
  }[])
    byQueue[r.q] = r.n;
  const one = (sql: string): number => db.prepare(sql).pluck().get() as number;
  return {
    jobsByState: byState,
    jobsByQueue: byQueue,
    delegations: one('SELECT count(*) FROM delegations'),
    accountingRecords: one('SELECT count(*) FROM accounting_records'),
    openAdminRequests: one('SELECT count(*) FROM admin_requests WHERE done_at IS NULL'),
    schemaVersion: one('SELECT max(version) FROM schema_migrations'),
  };
}
