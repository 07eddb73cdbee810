/**
 * The ComputingActivity as it was built before the compiled template (src/doc/template.ts):
 * an element tree per job from a hand-written builder, rendered by the generic renderers.
 * Kept only as the oracle the template's output is compared with, byte for byte, in
 * test/info/activity-template.test.ts, and as the "before" of bench/info.bench.ts.
 * Do not change it to make a test pass: a difference is a change of the answer clients see.
 */
import { GLUE2_FIGURE_ELEMENTS, USAGE_FIGURES } from '../../src/vocabulary/usage-figures.js';
import { el, type XmlElement } from '../../src/doc/element.js';
import type { ActivityContext, ActivityView } from '../../src/info/activity-view.js';
import { restartStateValues, stateValues } from '../../src/info/activity-states.js';
import { errorLines, NO_DELEGATION_MESSAGE } from '../../src/info/computing-activity.js';
import { DEFAULT_ACTIVITY_VALIDITY_SECONDS, GLUE2_NS, REST_INTERFACE_NAME } from '../../src/info/glue2-constants.js';
import { computingActivityId, computingShareId, idFromEndpoint } from '../../src/info/glue2-ids.js';
import { leaf, leaves, type MaybeElement } from '../../src/info/glue2-elements.js';
import { countText, glueTime, intText, nonEmpty } from '../../src/info/glue2-values.js';
import type { ActivityOptions } from '../../src/jobs/activity.js';
import type { JobRecord } from '../../src/store/job-record.js';
import { lrmsLetter, type InternalState, type LrmsSubState, type RestState } from '../../src/vocabulary/job-states.js';

/** The options then: the job's delegations were read from job_delegations, one query per job. */
export type LegacyActivityOptions = ActivityOptions & { readonly delegationsOf: (id: string) => string[] };

function kbToMb(kb: number | undefined): string | undefined {
  if (kb === undefined || !Number.isFinite(kb) || kb < 0) return undefined;
  return String(Math.ceil(kb / 1024));
}

export function legacyComputingActivity(job: ActivityView, ctx: ActivityContext): XmlElement {
  const attrs: Record<string, string> = { xmlns: GLUE2_NS, BaseType: 'Activity' };
  const created = glueTime(ctx.now);
  if (created !== undefined) attrs.CreationTime = created;
  attrs.Validity = countText(ctx.validitySeconds) ?? String(DEFAULT_ACTIVITY_VALIDITY_SECONDS);

  const messages = [...(job.otherMessages ?? [])];
  if (job.delegationIds !== undefined && job.delegationIds.length === 0) messages.push(NO_DELEGATION_MESSAGE);

  const queue = nonEmpty(job.queue);
  const children: (MaybeElement | XmlElement[])[] = [
    leaf('ID', computingActivityId(ctx.hostname, job.id)),
    leaf('Name', nonEmpty(job.name)),
    leaf('OtherInfo', `SubmittedVia=${REST_INTERFACE_NAME}`),
    (job.fqans ?? []).map((f) => el('OtherInfo', `VOMSFQAN=${f}`)),
    job.reportedByJob?.length ? [el('OtherInfo', `ReportedByJob=${job.reportedByJob.join(',')}`)] : [],
    leaf('Type', 'single'),
    leaf('IDFromEndpoint', idFromEndpoint(job.id)),
    leaf('LocalIDFromManager', nonEmpty(job.localId)),
    leaf('JobDescription', job.descriptionLanguage),
    stateValues(job).map((v) => el('State', v)),
    job.failedState === undefined ? undefined : restartStateValues(job.failedState).map((v) => el('RestartState', v)),
    leaf('ExitCode', intText(job.exitCode)),
    leaf('ComputingManagerExitCode', intText(job.lrmsExitCode)),
    errorLines(job.failureReasons).map((line) => el('Error', line)),
    leaf('WaitingPosition', countText(job.waitingPosition)),
    leaf('Owner', nonEmpty(job.ownerDn)),
    leaf('LocalOwner', nonEmpty(job.localOwner)),
    leaf('RequestedTotalWallTime', countText(job.requestedWallTimeSeconds)),
    leaf('RequestedTotalCPUTime', countText(job.requestedCpuTimeSeconds)),
    leaf('RequestedSlots', countText(job.requestedSlots)),
    leaves('RequestedApplicationEnvironment', job.requestedRuntimeEnvironments),
    leaf('StdIn', nonEmpty(job.stdin)),
    leaf('StdOut', nonEmpty(job.stdout)),
    leaf('StdErr', nonEmpty(job.stderr)),
    leaf('LogDir', nonEmpty(job.logDir)),
    leaves('ExecutionNode', job.executionNodes),
    leaf('Queue', queue),
    leaf('UsedTotalWallTime', countText(job.usedWallTimeSeconds)),
    leaf('UsedTotalCPUTime', countText(job.usedCpuTimeSeconds)),
    leaf('UsedMainMemory', kbToMb(job.usedMemoryKb)),
    leaf('SubmissionTime', glueTime(job.submissionTime)),
    leaf('ComputingManagerSubmissionTime', glueTime(job.lrmsSubmissionTime)),
    leaf('StartTime', glueTime(job.startTime)),
    leaf('ComputingManagerEndTime', glueTime(job.lrmsEndTime)),
    leaf('EndTime', glueTime(job.endTime)),
    leaf('WorkingAreaEraseTime', glueTime(job.workingAreaEraseTime)),
    leaf('ProxyExpirationTime', glueTime(job.proxyExpirationTime)),
    leaf('SubmissionHost', nonEmpty(job.submissionHost)),
    leaf('SubmissionClientName', nonEmpty(job.submissionClientName)),
    leaves('OtherMessages', messages),
    queue === undefined
      ? undefined
      : el('Associations', [el('ComputingShareID', computingShareId(ctx.hostname, queue))]),
  ];
  return el('ComputingActivity', children, attrs);
}

export function legacyActivityView(j: JobRecord, o: LegacyActivityOptions): ActivityView {
  const d = j.description;
  const usage = (j.engine.usage ?? {}) as {
    wallTimeSeconds?: number;
    cpuTimeSeconds?: number;
    maxRssBytes?: number;
    nodes?: string[];
    startTime?: number;
    endTime?: number;
    jobReported?: string[];
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
    ...(j.localAccount !== null ? { localOwner: j.localAccount } : {}),
    ...(j.fqans.length > 0 ? { fqans: j.fqans } : {}),
    queue: j.queue,
    requestedSlots: slots,
    submissionTime: new Date(j.createdAt),
    delegationIds: delegs,
  };
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
  if (j.startedAt !== null) v.startTime = new Date(j.startedAt);
  if (usage.endTime !== undefined) v.lrmsEndTime = new Date(usage.endTime);
  // Added with the figures only the job reported: the elements that carry them, in the vocabulary's order.
  const reported = USAGE_FIGURES.filter((f) => usage.jobReported?.includes(f));
  if (reported.length) v.reportedByJob = reported.map((f) => GLUE2_FIGURE_ELEMENTS[f]);
  if (j.endedAt !== null) v.endTime = new Date(j.endedAt);
  if (j.eraseAt !== null) v.workingAreaEraseTime = new Date(j.eraseAt);
  if (proxyExp) v.proxyExpirationTime = proxyExp;
  if (j.clientHost) v.submissionHost = j.clientHost;
  return v;
}

export function legacyActivityDocument(j: JobRecord, o: LegacyActivityOptions, now: Date): XmlElement {
  return legacyComputingActivity(legacyActivityView(j, o), { hostname: o.hostname, now });
}
