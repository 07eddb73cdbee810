/**
 * A job's batch specification for its current attempt, from the stored description.
 * The attempt directory is named after `rerunsLeft`, which changes exactly when a new
 * attempt starts (restart), so a submission repeated after a crash reuses the same
 * directory and the backend recognises the job it already started (never runs twice).
 */
import { join } from 'node:path';
import type { BatchJobSpec, RuntimeEnvironmentRun } from '../../lrms/backend.js';
import type { JobRecord } from '../../store/job-record.js';

export function attemptDir(lrmsJobsRoot: string, j: Pick<JobRecord, 'id' | 'rerunsLeft'>): string {
  return join(lrmsJobsRoot, j.id.slice(0, 2), j.id, `r${j.rerunsLeft}`);
}

export interface SpecContext {
  readonly sessionDir: string;
  readonly lrmsDir: string;
  /** Configured runtime environment scripts by name. */
  readonly rteScripts: ReadonlyMap<string, string | undefined>;
  readonly serviceUrl: string;
  /**
   * The account a job without a stored local account runs as: the default account of a
   * root service (`accounts.default`). Jobs submitted since it exists carry it already;
   * this covers a job stored by an earlier version, which would otherwise run as root.
   */
  readonly defaultAccount?: string | undefined;
}

export function batchSpec(j: JobRecord, ctx: SpecContext): BatchJobSpec {
  const d = j.description;
  const rtes: RuntimeEnvironmentRun[] = [];
  for (const r of d.runtimeEnvironments) {
    const script = ctx.rteScripts.get(r.name);
    if (script) rtes.push({ name: r.name, script, options: r.options });
  }
  const slots = Math.max(1, d.count ?? 1);
  const environment = [
    { name: 'GRID_GLOBAL_JOBURL', value: `${ctx.serviceUrl}/rest/1.0/jobs/${j.id}` },
    { name: 'GRID_GLOBAL_JOBHOST', value: new URL(ctx.serviceUrl).hostname },
    { name: 'RUNTIME_JOB_ID', value: j.id },
    { name: 'ARC_SLOTS', value: String(slots) },
    ...d.environment.map(([name, value]) => ({ name, value })),
  ];
  const limits: { wallTimeSeconds?: number; cpuTimeSeconds?: number; memoryBytes?: number } = {};
  if (d.wallTimeSeconds !== undefined) limits.wallTimeSeconds = d.wallTimeSeconds;
  if (d.cpuTimeSeconds !== undefined) limits.cpuTimeSeconds = d.cpuTimeSeconds;
  if (d.memoryBytes !== undefined) limits.memoryBytes = d.memoryBytes * slots;
  return {
    jobId: j.id,
    sessionDir: ctx.sessionDir,
    lrmsDir: ctx.lrmsDir,
    executable: d.executable ?? '/bin/true',
    arguments: d.arguments,
    ...(d.stdin !== undefined ? { stdin: d.stdin } : {}),
    ...(d.stdout !== undefined ? { stdout: d.stdout } : {}),
    ...(d.stderr !== undefined ? { stderr: d.stderr } : {}),
    join: d.join,
    environment,
    runtimeEnvironments: rtes,
    runtimeEnvironmentNames: d.runtimeEnvironments.map((r) => r.name),
    limits,
    slots,
    ...(d.countPerNode !== undefined ? { slotsPerNode: d.countPerNode } : {}),
    ...(d.exclusiveExecution === true ? { exclusive: true } : {}),
    queue: j.queue,
    ...(j.route !== null ? { route: j.route } : {}),
    ...(j.localAccount !== null
      ? { localAccount: j.localAccount }
      : ctx.defaultAccount !== undefined
        ? { localAccount: ctx.defaultAccount }
        : {}),
    ...(d.jobName !== undefined ? { name: d.jobName } : {}),
  };
}
