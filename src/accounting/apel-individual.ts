/**
 * APEL individual job records (`APEL-individual-job-message: v0.3`), one per job run,
 * for sites that publish per-job records instead of summaries. APEL keys a job record on
 * (MachineName, LocalJobId, EndTime): MachineName is the published host name and
 * LocalJobId the Ceres job id (unique and stable, which the batch id is not: a job
 * killed before the batch system has none, and batch ids restart), so a record sent
 * again replaces itself.
 */
import type { AccountingRecord } from './record.js';
import { apelRecord, benchmarkFields, voGroupRole, type ApelOptions } from './apel.js';

export const INDIVIDUAL_HEADER = 'APEL-individual-job-message: v0.3';

export interface IndividualOptions extends ApelOptions {
  /** The published host name (cluster.hostname), never the OS host name. */
  readonly machineName: string;
}

export function jobRecord(r: AccountingRecord, o: IndividualOptions): string {
  const { group, role } = voGroupRole(r.fqans);
  const opt = (k: string, v: string | number | null | undefined): [string, string | number][] =>
    v === null || v === undefined ? [] : [[k, v]];
  return apelRecord([
    ['Site', o.site],
    ['SubmitHost', r.endpoint],
    ['MachineName', o.machineName],
    ['Queue', r.queue],
    ['LocalJobId', r.jobId],
    ...opt('LocalUserId', r.localAccount),
    ['GlobalUserName', r.owner],
    ...(r.vo !== null
      ? ([
          ['FQAN', r.fqans[0] ?? `/${r.vo}`],
          ['VO', r.vo],
          ['VOGroup', group],
          ['VORole', role],
        ] as [string, string][])
      : []),
    ['WallDuration', Math.round(r.wallSeconds ?? 0)],
    ['CpuDuration', Math.round((r.userCpuSeconds ?? 0) + (r.systemCpuSeconds ?? 0))],
    ['Processors', r.cores],
    ['NodeCount', Math.max(1, r.nodes.length)],
    // StartTime is mandatory: a run that never started (killed while queued) ran from its end.
    ['StartTime', Math.floor((r.startedAt ?? r.endedAt) / 1000)],
    ['EndTime', Math.floor(r.endedAt / 1000)],
    ['InfrastructureDescription', 'Ceres'],
    ['InfrastructureType', 'grid'],
    ...opt('MemoryReal', r.maxRssBytes === null ? null : Math.ceil(r.maxRssBytes / 1024)),
    ...benchmarkFields(o),
  ]);
}
