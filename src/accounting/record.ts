/**
 * One accounting record: what a site hands to APEL/SGAS for one run of a job that
 * reached a final state (FINISHED, FAILED or KILLED). Times in ms since the epoch,
 * durations in seconds; usage figures the batch system did not report are null.
 * `jobReported` names the figures only the job itself vouches for (docs/security.md,
 * "What a site can trust in accounting").
 */
import { usageFigures, type UsageFigure } from '../vocabulary/usage-figures.js';

export interface AccountingRecord {
  readonly jobId: string;
  /** Batch-system (local) id; null when the job never reached the batch system. */
  readonly localId: string | null;
  /** The service endpoint URL the job was submitted to. */
  readonly endpoint: string;
  readonly queue: string;
  /** Owner: certificate subject DN (or token identity). */
  readonly owner: string;
  /** VO of the owner's first FQAN; null without VOMS attributes. */
  readonly vo: string | null;
  readonly fqans: readonly string[];
  readonly localAccount: string | null;
  /** REST final state: FINISHED, FAILED or KILLED. */
  readonly finalState: string;
  readonly exitCode: number | null;
  readonly submittedAt: number;
  readonly startedAt: number | null;
  readonly endedAt: number;
  readonly wallSeconds: number | null;
  readonly userCpuSeconds: number | null;
  readonly systemCpuSeconds: number | null;
  readonly cores: number;
  readonly nodes: readonly string[];
  readonly maxRssBytes: number | null;
  readonly stageInBytes: number;
  readonly stageOutBytes: number;
  readonly runtimeEnvironments: readonly string[];
  readonly recordedAt: number;
  /** Figures (exit code, wall and CPU time, memory, ...) the job reported and the batch system did not measure. */
  readonly jobReported: readonly UsageFigure[];
}

export interface AccountingRow {
  job_id: string;
  ended_at: number;
  local_id: string | null;
  endpoint: string;
  queue: string;
  owner: string;
  vo: string | null;
  fqans: string;
  local_account: string | null;
  final_state: string;
  exit_code: number | null;
  submitted_at: number;
  started_at: number | null;
  wall_seconds: number | null;
  user_cpu_seconds: number | null;
  system_cpu_seconds: number | null;
  cores: number;
  nodes: string;
  max_rss_bytes: number | null;
  stage_in_bytes: number;
  stage_out_bytes: number;
  runtime_envs: string;
  recorded_at: number;
  job_reported: string;
}

export function toRow(r: AccountingRecord): AccountingRow {
  return {
    job_id: r.jobId,
    ended_at: r.endedAt,
    local_id: r.localId,
    endpoint: r.endpoint,
    queue: r.queue,
    owner: r.owner,
    vo: r.vo,
    fqans: JSON.stringify(r.fqans),
    local_account: r.localAccount,
    final_state: r.finalState,
    exit_code: r.exitCode,
    submitted_at: r.submittedAt,
    started_at: r.startedAt,
    wall_seconds: r.wallSeconds,
    user_cpu_seconds: r.userCpuSeconds,
    system_cpu_seconds: r.systemCpuSeconds,
    cores: r.cores,
    nodes: JSON.stringify(r.nodes),
    max_rss_bytes: r.maxRssBytes,
    stage_in_bytes: r.stageInBytes,
    stage_out_bytes: r.stageOutBytes,
    runtime_envs: JSON.stringify(r.runtimeEnvironments),
    recorded_at: r.recordedAt,
    job_reported: JSON.stringify(r.jobReported),
  };
}

export function fromRow(r: AccountingRow): AccountingRecord {
  return {
    jobId: r.job_id,
    localId: r.local_id,
    endpoint: r.endpoint,
    queue: r.queue,
    owner: r.owner,
    vo: r.vo,
    fqans: JSON.parse(r.fqans) as string[],
    localAccount: r.local_account,
    finalState: r.final_state,
    exitCode: r.exit_code,
    submittedAt: r.submitted_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    wallSeconds: r.wall_seconds,
    userCpuSeconds: r.user_cpu_seconds,
    systemCpuSeconds: r.system_cpu_seconds,
    cores: r.cores,
    nodes: JSON.parse(r.nodes) as string[],
    maxRssBytes: r.max_rss_bytes,
    stageInBytes: r.stage_in_bytes,
    stageOutBytes: r.stage_out_bytes,
    runtimeEnvironments: JSON.parse(r.runtime_envs) as string[],
    recordedAt: r.recorded_at,
    jobReported: usageFigures(JSON.parse(r.job_reported)),
  };
}

/** The VO of an FQAN: its first group (`/atlas/Role=production` → `atlas`). */
export function voOf(fqans: readonly string[]): string | null {
  const first = fqans[0];
  if (first === undefined) return null;
  const vo = first.split('/')[1];
  return vo ? vo : null;
}
