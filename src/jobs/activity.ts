/**
 * JobRecord → the GLUE2 ComputingActivity clients read (`action=info`, diagnose `xml`),
 * computed at request time from the live record: never stale (A-REX serves a file the
 * info provider rewrites every minute or so).
 */
import type { WrittenDoc } from '../doc/written-doc.js';
import type { XmlElement } from '../doc/element.js';
import type { DocBodies, TemplateDoc } from '../doc/template.js';
import { computingActivity, computingActivityFrom } from '../info/computing-activity.js';
import type { ActivityView } from '../info/activity-view.js';
import type { TimeValue } from '../info/glue2-values.js';
import { lrmsLetter, type InternalState, type LrmsSubState, type RestState } from '../vocabulary/job-states.js';
import type { JobRecord } from '../store/job-record.js';
import { GLUE2_FIGURE_ELEMENTS, usageFigures } from '../vocabulary/usage-figures.js';
import { delegationIdsOf } from './job-service.js';
import { waitJobOf, waitReasonIsLive, type WaitJob } from './wait-reason.js';

export interface ActivityOptions {
  readonly hostname: string;
  readonly proxyExpiry?: (delegationId: string) => Date | undefined;
  /**
   * Why a job waits (wait-reason.ts), published as an OtherMessages entry; absent: not
   * published. Called once per answer (its counts read once), the result once per job.
   */
  readonly waitReasons?: () => (j: JobRecord) => string | undefined;
}

interface Usage {
  wallTimeSeconds?: number;
  cpuTimeSeconds?: number;
  maxRssBytes?: number;
  nodes?: string[];
  startTime?: number;
  endTime?: number;
  jobReported?: unknown;
}

const NO_USAGE: Usage = {};
const undefinedIfNull = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/**
 * The view of a stored job. One object literal with every field (absent ones undefined,
 * which the document treats as absent): objects that gain fields one by one past a few
 * dozen turn into slow dictionaries, and a thousand of these are made per info answer.
 * Times are epoch seconds (TimeValue), not Dates.
 *
 * The delegations a job uses are the ones its description names: they are what the
 * submission recorded for it (job_delegations, written once with the job), so the
 * record answers without another query per job.
 */
export function activityView(
  j: JobRecord,
  o: ActivityOptions,
  waitReason: ((j: JobRecord) => string | undefined) | undefined = o.waitReasons?.(),
): ActivityView {
  const d = j.description;
  const usage = (j.engine.usage ?? NO_USAGE) as Usage;
  const slots = d.count ?? 1;
  const nodes = usage.nodes;
  return {
    id: j.id,
    name: d.jobName,
    descriptionLanguage: j.format === 'xrsl' ? 'nordugrid:xrsl' : 'emies:adl',
    restState: j.restState as RestState,
    gmState: j.state as InternalState,
    pending: j.pending,
    lrmsState: j.lrmsState ? lrmsLetter(j.lrmsState as LrmsSubState) : undefined,
    failedState: j.failedState ? (j.failedState as InternalState) : undefined,
    failureReasons: j.failureReason ? [j.failureReason] : undefined,
    exitCode: undefinedIfNull(j.exitCode),
    ownerDn: j.ownerDn,
    localOwner: undefinedIfNull(j.localAccount),
    fqans: j.fqans.length > 0 ? j.fqans : undefined,
    requestedWallTimeSeconds: d.wallTimeSeconds,
    requestedCpuTimeSeconds: d.cpuTimeSeconds,
    requestedSlots: slots,
    requestedRuntimeEnvironments: d.runtimeEnvironments.length ? d.runtimeEnvironments.map((r) => r.name) : undefined,
    stdin: d.stdin,
    stdout: d.stdout,
    stderr: d.stderr,
    logDir: d.logDir,
    executionNodes: nodes?.length ? nodes : undefined,
    queue: j.queue,
    localId: j.localId ? j.localId : undefined,
    usedWallTimeSeconds: usage.wallTimeSeconds === undefined ? undefined : Math.round(usage.wallTimeSeconds) * slots,
    usedCpuTimeSeconds: usage.cpuTimeSeconds === undefined ? undefined : Math.round(usage.cpuTimeSeconds),
    usedMemoryKb: usage.maxRssBytes === undefined ? undefined : Math.ceil(usage.maxRssBytes / 1024),
    reportedByJob: usage.jobReported === undefined ? undefined : reportedElements(usage.jobReported),
    submissionTime: j.createdAt / 1000,
    startTime: j.startedAt === null ? undefined : j.startedAt / 1000,
    lrmsEndTime: usage.endTime === undefined ? undefined : usage.endTime / 1000,
    endTime: j.endedAt === null ? undefined : j.endedAt / 1000,
    workingAreaEraseTime: j.eraseAt === null ? undefined : j.eraseAt / 1000,
    proxyExpirationTime: (j.delegationId && o.proxyExpiry?.(j.delegationId)) || undefined,
    submissionHost: j.clientHost ? j.clientHost : undefined,
    delegationIds: delegationIdsOf(d),
    otherMessages: waitMessages(waitReason?.(j)),
  };
}

/** The OtherMessages entry saying why the job waits (`Waiting: <reason>`), or undefined. */
function waitMessages(why: string | undefined): readonly string[] | undefined {
  return why === undefined ? undefined : [`${WAITING_PREFIX}${why}`];
}

/** What starts the OtherMessages entry of a waiting job: a client picks it out by it. */
export const WAITING_PREFIX = 'Waiting: ';

/** The ComputingActivity elements of the figures the job alone reported (usage-figures.ts); undefined: none. */
function reportedElements(stored: unknown): string[] | undefined {
  const figures = usageFigures(stored);
  return figures.length > 0 ? figures.map((f) => GLUE2_FIGURE_ELEMENTS[f]) : undefined;
}

/** The job's ComputingActivity, written straight to the answer's format (src/doc/template.ts). */
export function activityDocument(j: JobRecord, o: ActivityOptions, now: TimeValue = Date.now() / 1000): WrittenDoc {
  return computingActivity(activityView(j, o), { hostname: o.hostname, now });
}

/** What one answer's activity documents are written with (activityWriter). */
export interface ActivityWriter {
  /** The document of a stored job. */
  write(j: JobRecord): TemplateDoc;
  /** A document from content written before for the same, unchanged job (activity-cache.ts). */
  wrap(bodies: DocBodies, element: () => XmlElement): TemplateDoc;
  /** The expiry (ms) of a job's delegation as this answer sees it; undefined: none or unknown. */
  proxyExpiryMs(delegationId: string | null): number | undefined;
  /**
   * For a job whose document may change while its record does not (its wait reason,
   * wait-reason.ts waitReasonIsLive): what the reason is read from, kept with the written
   * document, and the reason now. Undefined: the document follows the record alone.
   */
  waiting(j: JobRecord): { readonly job: WaitJob; readonly why: string | undefined } | undefined;
  /** The reason now of a job kept as `job` (a kept document is used only while it is the same). */
  whyNow(job: WaitJob): string | undefined;
}

/**
 * The documents of one answer: one clock reading for all of them, and each delegation's
 * expiry looked up once (a user's jobs share a few delegations; each lookup is a query).
 */
export function activityWriter(o: ActivityOptions, now: TimeValue = Date.now() / 1000): ActivityWriter {
  const lookup = o.proxyExpiry;
  const expiries = new Map<string, Date | undefined>();
  const expiry = (id: string): Date | undefined => {
    if (lookup === undefined) return undefined;
    if (expiries.has(id)) return expiries.get(id);
    const e = lookup(id);
    expiries.set(id, e);
    return e;
  };
  const memo: ActivityOptions = { hostname: o.hostname, proxyExpiry: expiry };
  const why = o.waitReasons?.();
  const ctx = { hostname: o.hostname, now };
  return {
    write: (j) => computingActivity(activityView(j, memo, why), ctx),
    wrap: (bodies, element) => computingActivityFrom(bodies, ctx, element),
    proxyExpiryMs: (id) => (id ? expiry(id)?.getTime() : undefined),
    waiting: (j) => {
      if (why === undefined || !waitReasonIsLive(j)) return undefined;
      const job = waitJobOf(j);
      return { job, why: why(j) };
    },
    whyNow: (job) => why?.(job as JobRecord),
  };
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
    ['subject', j.ownerDn],
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
