/**
 * The per-job GLUE2 ComputingActivity returned by `POST jobs?action=info` (inside
 * `info_document`), which the ARC client's arcstat feeds to Job::SetFromXML and
 * pyarcrest/aCT read as JSON. Children in A-REX's order, each present only if
 * known. Pure: the caller maps its live job record to an ActivityView.
 *
 * Rendering notes (checked by the tests): `State` always has three values, so the
 * JSON rendering gives an array; `Error`, `ExecutionNode` and the other repeated
 * elements are arrays only when there are two or more (pyarcrest accepts both);
 * the attributes land under `_attributes`; times are `YYYY-MM-DDThh:mm:ssZ` UTC.
 */
import { el, type XmlElement } from '../doc/element.js';
import type { ActivityContext, ActivityView } from './activity-view.js';
import { restartStateValues, stateValues } from './activity-states.js';
import { DEFAULT_ACTIVITY_VALIDITY_SECONDS, GLUE2_NS, REST_INTERFACE_NAME } from './glue2-constants.js';
import { computingActivityId, computingShareId, idFromEndpoint } from './glue2-ids.js';
import { leaf, leaves, type MaybeElement } from './glue2-elements.js';
import { countText, glueTime, intText, nonEmpty } from './glue2-values.js';

/** Note published when the job has no delegated credential. */
export const NO_DELEGATION_MESSAGE = 'no delegation: data staging uses no credentials';

/** Caps on the published failure text; A-REX publishes the first 1024 bytes of its `failed` file. */
export const MAX_ERROR_LINES = 64;
export const MAX_ERROR_LINE_CHARS = 1024;

/** The first `n` UTF-16 units of `s`, never splitting a surrogate pair (a lone half is not valid XML text). */
function cut(s: string, n: number): string {
  const code = s.charCodeAt(n - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** One line per element; blank lines dropped; bounded so a runaway reason cannot bloat every info answer. */
export function errorLines(reasons: readonly string[] | undefined): string[] {
  const out: string[] = [];
  if (!reasons) return out;
  for (const r of reasons) {
    for (const raw of r.split(/\r?\n|\r/)) {
      const line = raw.trimEnd();
      if (line.trim() === '') continue;
      if (out.length === MAX_ERROR_LINES) return out;
      out.push(line.length > MAX_ERROR_LINE_CHARS ? cut(line, MAX_ERROR_LINE_CHARS) : line);
    }
  }
  return out;
}

/** Memory in kB as whole MB, rounded up (A-REX: ceil(kB / 1024)). */
function kbToMb(kb: number | undefined): string | undefined {
  if (kb === undefined || !Number.isFinite(kb) || kb < 0) return undefined;
  return String(Math.ceil(kb / 1024));
}

export function buildComputingActivity(job: ActivityView, ctx: ActivityContext): XmlElement {
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
