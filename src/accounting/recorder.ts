/**
 * Writes the accounting record of a job run that reached a final state. Called by the
 * engine right after the final transition is persisted, and once at service start for
 * every ended job without its record (the service died between the two), so every
 * final state is recorded; the primary key (job id, end time) with INSERT OR IGNORE
 * makes every later write of the same run a no-op (written once, idempotent). Records
 * have no reference to the job row: they stay when the job is cleaned or wiped.
 */
import type { Db } from '../store/database.js';
import type { JobRecord } from '../store/job-record.js';
import type { AccountingRecord } from './record.js';
import { toRow, voOf } from './record.js';
import { usageFigures } from '../vocabulary/usage-figures.js';
import { OUTCOME_REST_STATES } from '../vocabulary/job-states.js';
import { sqlState } from '../store/state-list.js';

export interface RecorderDeps {
  readonly db: Db;
  readonly endpoint: () => string;
  /** The job's `statistics` control file (transfer lines), if any. */
  readonly statistics: (jobId: string) => Promise<string | undefined>;
  readonly now?: () => number;
}

const FINAL_REST = new Set<string>(OUTCOME_REST_STATES);

export class AccountingRecorder {
  readonly #d: RecorderDeps;
  readonly #insert;
  readonly #missing;

  constructor(d: RecorderDeps) {
    this.#d = d;
    this.#insert = d.db.prepare(
      `INSERT OR IGNORE INTO accounting_records (job_id, ended_at, local_id, endpoint, queue, owner, vo, fqans, local_account, final_state, exit_code, submitted_at, started_at,
         wall_seconds, user_cpu_seconds, system_cpu_seconds, cores, nodes, max_rss_bytes, stage_in_bytes, stage_out_bytes, runtime_envs, recorded_at, job_reported)
       VALUES (@job_id, @ended_at, @local_id, @endpoint, @queue, @owner, @vo, @fqans, @local_account, @final_state, @exit_code, @submitted_at, @started_at,
         @wall_seconds, @user_cpu_seconds, @system_cpu_seconds, @cores, @nodes, @max_rss_bytes, @stage_in_bytes, @stage_out_bytes, @runtime_envs, @recorded_at, @job_reported)`,
    );
    // One page of the table in rowid order: a range scan, so a start with a million
    // stored jobs reads them in short slices between other work (operations.ts).
    this.#missing = d.db.prepare(
      `SELECT j.rowid AS r, (j.state = ${sqlState('FINISHED')} AND j.ended_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM accounting_records a WHERE a.job_id = j.id AND a.ended_at = j.ended_at)) AS miss, j.id AS id
       FROM jobs j WHERE j.rowid > ? ORDER BY j.rowid LIMIT ?`,
    );
  }

  /** Record `job` if it is a finished run; returns whether a new record was written. */
  async record(job: JobRecord): Promise<boolean> {
    if (job.endedAt === null || !FINAL_REST.has(job.restState)) return false;
    const r = await this.build(job);
    return this.#insert.run(toRow(r)).changes === 1;
  }

  /**
   * Ids of ended jobs with no record for their last run (start-up catch-up), among the
   * `limit` jobs after `afterRowid`; `next` continues the scan, undefined at the end.
   */
  missingPage(afterRowid: number, limit: number): { ids: string[]; next: number | undefined } {
    const rows = this.#missing.all(afterRowid, limit) as { r: number; miss: number; id: string }[];
    return {
      ids: rows.filter((x) => x.miss === 1).map((x) => x.id),
      next: rows.length < limit ? undefined : rows[rows.length - 1]!.r,
    };
  }

  async build(job: JobRecord): Promise<AccountingRecord> {
    const usage = (job.engine.usage ?? {}) as Partial<
      Record<'wallTimeSeconds' | 'userTimeSeconds' | 'kernelTimeSeconds' | 'cpuTimeSeconds' | 'maxRssBytes', number>
    > & { nodes?: string[]; jobReported?: unknown };
    const d = job.description;
    // Only transfers (a download from a source, an upload to a target) write statistics
    // lines: a job that moves no data has no file to read.
    const moves = d.inputFiles.some((f) => f.source !== undefined) || d.outputFiles.some((o) => o.target !== undefined);
    const bytes = moves ? transferBytes(await this.#d.statistics(job.id).catch(() => undefined)) : { in: 0, out: 0 };
    return {
      jobId: job.id,
      localId: job.localId,
      endpoint: this.#d.endpoint(),
      queue: job.queue,
      owner: job.ownerDn,
      vo: voOf(job.fqans),
      fqans: job.fqans,
      localAccount: job.localAccount,
      finalState: job.restState,
      exitCode: job.exitCode,
      submittedAt: job.createdAt,
      startedAt: job.startedAt,
      endedAt: job.endedAt!,
      wallSeconds: usage.wallTimeSeconds ?? (job.startedAt !== null ? (job.endedAt! - job.startedAt) / 1000 : null),
      // Older usage entries carry only the sum; it is then all user time.
      userCpuSeconds: usage.userTimeSeconds ?? usage.cpuTimeSeconds ?? null,
      systemCpuSeconds: usage.kernelTimeSeconds ?? (usage.cpuTimeSeconds !== undefined ? 0 : null),
      cores: Math.max(1, d.count ?? 1),
      nodes: usage.nodes ?? [],
      maxRssBytes: usage.maxRssBytes ?? null,
      stageInBytes: bytes.in,
      stageOutBytes: bytes.out,
      runtimeEnvironments: (d.runtimeEnvironments ?? []).map((r) => r.name),
      recordedAt: (this.#d.now ?? Date.now)(),
      jobReported: usageFigures(usage.jobReported),
    };
  }
}

/** Sum of `size=` of the `inputfile:` and `outputfile:` lines of a statistics file. */
export function transferBytes(text: string | undefined): { in: number; out: number } {
  const out = { in: 0, out: 0 };
  for (const line of (text ?? '').split('\n')) {
    const m = /^(inputfile|outputfile):.*[:,]size=(\d+)/.exec(line);
    if (!m) continue;
    if (m[1] === 'inputfile') out.in += Number(m[2]);
    else out.out += Number(m[2]);
  }
  return out;
}
