/**
 * JobRecord → the GLUE2 ComputingActivity clients read (`action=info`, diagnose `xml`),
 * computed at request time from the live record: never stale (A-REX serves a file the
 * info provider rewrites every minute or so).
 */
import type { WrittenDoc } from '../doc/written-doc.js';
import { computingActivity } from '../info/computing-activity.js';
import type { ActivityView } from '../info/activity-view.js';
import type { TimeValue } from '../info/glue2-values.js';
import { lrmsLetter, type InternalState, type LrmsSubState, type RestState } from '../vocabulary/job-states.js';
import type { JobRecord } from '../store/job-record.js';

export interface ActivityOptions {
  readonly hostname: string;
  readonly delegationsOf: (id: string) => string[];
  readonly proxyExpiry?: (delegationId: string) => Date | undefined;
}

export function activityView(j: JobRecord, o: ActivityOptions): ActivityView {
  const d = j.description;
  const usage = (j.engine.usage ?? {}) as {
    wallTimeSeconds?: number;
    cpuTimeSeconds?: number;
    maxRssBytes?: number;
    nodes?: string[];
    startTime?: number;
    endTime?: number;
  };
  const delegs = o.delegationsOf(j.id);
  const proxyExp = j.delegationId && o.proxyExpiry ? o.proxyExpiry(j.delegationId) : undefined;
  const slots = d.count ?? 1;
  const v: { -readonly [K in keyof ActivityView]: ActivityView[K] } = {
    id: j.id,
    restState: j.restState as RestState,
    gmState: j.state as InternalState,
    pending: j.pending,
    descriptionLanguage: j.format === 'xrsl' ? 'nordugrid:xrsl' : 'emies:adl',
    ownerDn: j.owner,
    queue: j.queue,
    requestedSlots: slots,
    submissionTime: j.createdAt / 1000,
    delegationIds: delegs,
  };
  if (j.localAccount !== null) v.localOwner = j.localAccount;
  if (j.fqans.length > 0) v.fqans = j.fqans;
  if (d.jobName !== undefined) v.name = d.jobName;
  if (j.lrmsState) v.lrmsState = lrmsLetter(j.lrmsState as LrmsSubState);
  if (j.failedState) v.failedState = j.failedState as InternalState;
  if (j.failureReason) v.failureReasons = [j.failureReason];
  if (j.exitCode !== null) v.exitCode = j.exitCode;
  if (d.wallTimeSeconds !== undefined) v.requestedWallTimeSeconds = d.wallTimeSeconds;
  if (d.cpuTimeSeconds !== undefined) v.requestedCpuTimeSeconds = d.cpuTimeSeconds;
  if (d.runtimeEnvironments.length) v.requestedRuntimeEnvironments = d.runtimeEnvironments.map((r) => r.name);
  if (d.stdin !== undefined) v.stdin = d.stdin;
  if (d.stdout !== undefined) v.stdout = d.stdout;
  if (d.stderr !== undefined) v.stderr = d.stderr;
  if (d.logDir !== undefined) v.logDir = d.logDir;
  if (j.localId) v.localId = j.localId;
  if (usage.nodes?.length) v.executionNodes = usage.nodes;
  if (usage.wallTimeSeconds !== undefined) v.usedWallTimeSeconds = Math.round(usage.wallTimeSeconds) * slots;
  if (usage.cpuTimeSeconds !== undefined) v.usedCpuTimeSeconds = Math.round(usage.cpuTimeSeconds);
  if (usage.maxRssBytes !== undefined) v.usedMemoryKb = Math.ceil(usage.maxRssBytes / 1024);
  // Times as epoch seconds (TimeValue): no Date per time per job.
  if (j.startedAt !== null) v.startTime = j.startedAt / 1000;
  if (usage.endTime !== undefined) v.lrmsEndTime = usage.endTime / 1000;
  if (j.endedAt !== null) v.endTime = j.endedAt / 1000;
  if (j.eraseAt !== null) v.workingAreaEraseTime = j.eraseAt / 1000;
  if (proxyExp) v.proxyExpirationTime = proxyExp;
  if (j.clientHost) v.submissionHost = j.clientHost;
  return v;
}

/** The job's ComputingActivity, written straight to the answer's format (src/doc/template.ts). */
export function activityDocument(j: JobRecord, o: ActivityOptions, now: TimeValue = Date.now() / 1000): WrittenDoc {
  return computingActivity(activityView(j, o), { hostname: o.hostname, now });
}

/** The `status` control file: the internal state, `PENDING:` when held back. */
export function statusFileText(j: JobRecord): string {
  return j.pending ? `PENDING:${j.state}` : j.state;
}

/** The `local` control file (A-REX's key=value format, keys with values only). */
export function localFileText(j: JobRecord, headnode: string): string {
  const d = j.description;
  const mds = (ms: number) =>
    new Date(ms)
      .toISOString()
      .replace(/[-:T]/g, '')
      .replace(/\.\d{3}Z$/, 'Z');
  const lines: [string, string | number | null | undefined][] = [
    ['globalid', j.id],
    ['headnode', headnode],
    ['interface', 'org.nordugrid.arcrest'],
    ['lrms', (j.engine.lrms as string | undefined) ?? undefined],
    ['queue', j.queue],
    ['localid', j.localId],
    [
      'args',
      [d.executable, ...d.arguments]
        .filter((x) => x !== undefined)
        .map(escapeArg)
        .join(' '),
    ],
    ['argscode', d.expectedExitCode],
    ['subject', j.owner],
    ['starttime', mds(j.createdAt)],
    ['lifetime', d.lifetimeSeconds],
    ['rerun', j.rerunsLeft],
    ['jobname', d.jobName],
    ['gmlog', d.logDir],
    ['cleanuptime', j.eraseAt === null ? undefined : mds(j.eraseAt)],
    ['clientname', j.clientHost],
    ['delegationid', j.delegationId],
    ['failedstate', j.failedState],
    ['failedcause', j.failedCause],
    ['priority', d.priority ?? 50],
    ['dryrun', d.dryRun ? 'yes' : 'no'],
    ['freestagein', d.clientDataPush ? 'yes' : 'no'],
  ];
  return (
    lines
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => `${k}=${String(v).replace(/\n/g, ' ')}`)
      .join('\n') + '\n'
  );
}

function escapeArg(s: string): string {
  return s.replace(/([\\ ])/g, '\\$1').replace(/\n/g, '\\n');
}
