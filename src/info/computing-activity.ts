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
import type { XmlElement } from '../doc/element.js';
import {
  compileTemplate,
  groupField,
  rootAttributes,
  textField,
  textsField,
  type DocBodies,
  type RootAttributes,
  type TemplateDoc,
} from '../doc/template.js';
import type { ActivityContext, ActivityView } from './activity-view.js';
import { restartStateValues, stateValues } from './activity-states.js';
import { DEFAULT_ACTIVITY_VALIDITY_SECONDS, GLUE2_NS, REST_INTERFACE_NAME } from './glue2-constants.js';
import { computingActivityId, computingShareId, idFromEndpoint } from './glue2-ids.js';
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

/** The non-blank values of a multi-valued property. */
function nonBlank(values: readonly string[] | undefined): readonly string[] {
  if (values === undefined || values.length === 0) return NONE;
  for (const v of values) if (nonEmpty(v) === undefined) return values.filter((x) => nonEmpty(x) !== undefined);
  return values;
}

const NONE: readonly string[] = Object.freeze([]);
const SUBMITTED_VIA = `SubmittedVia=${REST_INTERFACE_NAME}`;
const ONLY_SUBMITTED_VIA: readonly string[] = Object.freeze([SUBMITTED_VIA]);

/** What the template reads: the job and the host name in its ids. */
interface Input {
  readonly job: ActivityView;
  readonly hostname: string;
}

/**
 * The document, child by child in A-REX's order; each child is present only if known
 * (glue2-elements.ts rules). Written straight to JSON and XML (src/doc/template.ts).
 */
const TEMPLATE = compileTemplate<Input>('ComputingActivity', [
  textField('ID', (x) => computingActivityId(x.hostname, x.job.id)),
  textField('Name', (x) => nonEmpty(x.job.name)),
  textsField('OtherInfo', ({ job }) => {
    const reported = job.reportedByJob?.length ? [`ReportedByJob=${job.reportedByJob.join(',')}`] : NONE;
    return (job.fqans === undefined || job.fqans.length === 0) && reported === NONE
      ? ONLY_SUBMITTED_VIA
      : [SUBMITTED_VIA, ...(job.fqans ?? NONE).map((f) => `VOMSFQAN=${f}`), ...reported];
  }),
  textField('Type', () => 'single'),
  textField('IDFromEndpoint', (x) => idFromEndpoint(x.job.id)),
  textField('LocalIDFromManager', (x) => nonEmpty(x.job.localId)),
  textField('JobDescription', (x) => x.job.descriptionLanguage),
  textsField('State', (x) => stateValues(x.job)),
  textsField('RestartState', ({ job }) => (job.failedState === undefined ? NONE : restartStateValues(job.failedState))),
  textField('ExitCode', (x) => intText(x.job.exitCode)),
  textField('ComputingManagerExitCode', (x) => intText(x.job.lrmsExitCode)),
  textsField('Error', (x) => (x.job.failureReasons === undefined ? NONE : errorLines(x.job.failureReasons))),
  textField('WaitingPosition', (x) => countText(x.job.waitingPosition)),
  textField('Owner', (x) => nonEmpty(x.job.ownerDn)),
  textField('LocalOwner', (x) => nonEmpty(x.job.localOwner)),
  textField('RequestedTotalWallTime', (x) => countText(x.job.requestedWallTimeSeconds)),
  textField('RequestedTotalCPUTime', (x) => countText(x.job.requestedCpuTimeSeconds)),
  textField('RequestedSlots', (x) => countText(x.job.requestedSlots)),
  textsField('RequestedApplicationEnvironment', (x) => nonBlank(x.job.requestedRuntimeEnvironments)),
  textField('StdIn', (x) => nonEmpty(x.job.stdin)),
  textField('StdOut', (x) => nonEmpty(x.job.stdout)),
  textField('StdErr', (x) => nonEmpty(x.job.stderr)),
  textField('LogDir', (x) => nonEmpty(x.job.logDir)),
  textsField('ExecutionNode', (x) => nonBlank(x.job.executionNodes)),
  textField('Queue', (x) => nonEmpty(x.job.queue)),
  textField('UsedTotalWallTime', (x) => countText(x.job.usedWallTimeSeconds)),
  textField('UsedTotalCPUTime', (x) => countText(x.job.usedCpuTimeSeconds)),
  textField('UsedMainMemory', (x) => kbToMb(x.job.usedMemoryKb)),
  textField('SubmissionTime', (x) => glueTime(x.job.submissionTime)),
  textField('ComputingManagerSubmissionTime', (x) => glueTime(x.job.lrmsSubmissionTime)),
  textField('StartTime', (x) => glueTime(x.job.startTime)),
  textField('ComputingManagerEndTime', (x) => glueTime(x.job.lrmsEndTime)),
  textField('EndTime', (x) => glueTime(x.job.endTime)),
  textField('WorkingAreaEraseTime', (x) => glueTime(x.job.workingAreaEraseTime)),
  textField('ProxyExpirationTime', (x) => glueTime(x.job.proxyExpirationTime)),
  textField('SubmissionHost', (x) => nonEmpty(x.job.submissionHost)),
  textField('SubmissionClientName', (x) => nonEmpty(x.job.submissionClientName)),
  textsField('OtherMessages', ({ job }) => {
    const noDelegation = job.delegationIds !== undefined && job.delegationIds.length === 0;
    const others = nonBlank(job.otherMessages);
    return noDelegation ? [...others, NO_DELEGATION_MESSAGE] : others;
  }),
  groupField('Associations', [
    textField('ComputingShareID', (x) => {
      const queue = nonEmpty(x.job.queue);
      return queue === undefined ? undefined : computingShareId(x.hostname, queue);
    }),
  ]),
]);

/**
 * The root's attributes change once a second at most (CreationTime has no fraction) and
 * are the same for every job of an answer: made once and reused while they stay equal.
 */
let lastAttributes: { created: string | undefined; validity: string; attrs: RootAttributes } | undefined;

function rootAttributesAt(ctx: ActivityContext): RootAttributes {
  const created = glueTime(ctx.now);
  const validity = countText(ctx.validitySeconds) ?? String(DEFAULT_ACTIVITY_VALIDITY_SECONDS);
  if (lastAttributes !== undefined && lastAttributes.created === created && lastAttributes.validity === validity)
    return lastAttributes.attrs;
  const record: Record<string, string> = { xmlns: GLUE2_NS, BaseType: 'Activity' };
  if (created !== undefined) record.CreationTime = created;
  record.Validity = validity;
  const attrs = rootAttributes(record);
  lastAttributes = { created, validity, attrs };
  return attrs;
}

/** The ComputingActivity of one job, written directly in the negotiated format (or as a tree). */
export function computingActivity(job: ActivityView, ctx: ActivityContext): TemplateDoc {
  return TEMPLATE.doc({ job, hostname: ctx.hostname }, rootAttributesAt(ctx));
}

/**
 * A ComputingActivity from content written before (a cache of unchanged jobs' documents):
 * only the root's attributes (CreationTime, Validity) are of this answer.
 */
export function computingActivityFrom(bodies: DocBodies, ctx: ActivityContext, element: () => XmlElement): TemplateDoc {
  return TEMPLATE.wrap(bodies, rootAttributesAt(ctx), element);
}

/** The same document as an element tree. */
export function buildComputingActivity(job: ActivityView, ctx: ActivityContext): XmlElement {
  return computingActivity(job, ctx).element();
}
