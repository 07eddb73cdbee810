/**
 * Acceptance of one parsed description for this service and this caller, after
 * parsing and before a job is created. The checks run in A-REX's order
 * (`make_new_job`) with its reason texts, because clients log and match them; the first
 * failure wins. Then come the checks A-REX leaves to later stages (the job is accepted
 * and fails minutes later): file names leaving the session, unknown runtime
 * environments, requests over the queue's limits. Finally the description is normalised:
 * queue and main delegation resolved, lifetime and rerun capped.
 *
 * Pure function of (description, context): no I/O, never throws for any input the
 * parsers produce.
 */
import { itemFailure, type ItemFailure } from './item-failure.js';
import type { JobDescription } from '../vocabulary/job-description.js';
import { urlScheme } from './locations.js';

/** A configured queue; the field names match the `cluster.queues` entries of the config. */
export interface QueueLimits {
  name: string;
  maxWallTimeSeconds?: number;
  minWallTimeSeconds?: number;
  maxCpuTimeSeconds?: number;
  /** Per slot. */
  maxMemoryBytes?: number;
  maxSlotsPerJob?: number;
  /**
   * The whole job's memory (memory per slot times slots), where the batch system runs a job
   * on one node (Kubernetes: one pod); the batch system's only, never configured.
   */
  maxJobMemoryBytes?: number;
  /**
   * Where a job runs on one node (Kubernetes): each node's whole CPUs and memory, together; a
   * job must fit one with its slots and its whole memory at once. The batch system's only.
   */
  nodeShapes?: readonly NodeShape[];
  /** Authorization groups whose members may use the queue; absent: every allowed caller. */
  allow?: readonly string[];
  /**
   * Limits that are the batch system's rather than the configuration's (the lower one
   * applies), with where they come from, named in the refusal (e.g. `Slurm partition debug`).
   */
  batchLimits?: { readonly source: string; readonly of: ReadonlySet<BatchLimitName> };
}

/** One node's room for one job: whole CPUs (slots) and memory. */
export interface NodeShape {
  readonly slots: number;
  readonly memoryBytes: number;
}

/** The limits a batch system may set, as a refusal names them. */
export type BatchLimitName = 'wall time' | 'memory' | 'slot count' | 'memory of the job';

export interface AcceptanceContext {
  /** Configured queues (cluster.queues). */
  queues: readonly QueueLimits[];
  /** Configured default queue (cluster.defaultQueue). */
  defaultQueue?: string;
  /** REST 1.1 `queue` parameter: used when the description names no queue. */
  requestQueue?: string;
  /** REST 1.1 `delegation_id` parameter: used when the description names no delegation. */
  requestDelegationId?: string;
  /** Queues this caller may use; absent = all configured queues. */
  authorisedQueues?: readonly string[];
  /** The caller's authorization groups, named when a queue is not open to them. */
  callerGroups?: readonly string[];
  /** Names of the enabled runtime environments (cluster.runtimeEnvironments). */
  runtimeEnvironments: readonly string[];
  /** Upper bound on the requested lifetime (A-REX `defaultttl` caps it). */
  maxLifetimeSeconds?: number;
  /** Upper bound on the requested reruns (A-REX `maxrerun`, default 5). */
  maxRerun?: number;
  /**
   * Whether data staging can move a URL of this scheme (lower-case); absent: every scheme
   * is accepted (and an unknown one fails the job at stage-in).
   */
  transferScheme?: (scheme: string) => boolean;
  /**
   * Why the caller (of `callerGroups`) may not name this source or target URL (of a scheme
   * staging moves), or undefined when it may: an S3 endpoint without configured keys or
   * not open to the caller's groups (src/staging/gfal2/s3-endpoints.ts).
   */
  transferEndpoint?: (url: string, callerGroups: readonly string[] | undefined) => string | undefined;
}

export type AcceptanceResult = { readonly ok: true; readonly description: JobDescription } | ItemFailure;

const DEFAULT_MAX_RERUN = 5;

export function checkAcceptance(desc: JobDescription, ctx: AcceptanceContext): AcceptanceResult {
  // A-REX 6a-6c: what its parser step leaves unresolved.
  if (desc.runtimeEnvironments.some((r) => r.constraint !== undefined))
    return itemFailure('CE_ERR_JOBDESC_RTE_UNRESOLVED');
  const acl = desc.accessControl;
  if (acl) {
    if (acl.content === undefined) return itemFailure('CE_ERR_JOBDESC_ACL_NO_CONTENT');
    if (acl.type !== undefined && acl.type !== '' && acl.type !== 'GACL' && acl.type !== 'ARC') {
      return itemFailure('CE_ERR_JOBDESC_ACL_TYPE', `ARC: unsupported ACL type specified: ${acl.type}`);
    }
  }
  // A-REX 7: an xRSL grid-manager action other than "request".
  if (desc.action !== undefined && desc.action !== 'request')
    return itemFailure('CE_ERR_JOBDESC_WRONG_ACTION', `Wrong action in job request: ${desc.action}`);

  // A-REX 9: queue. Its two texts are swapped (unknown queue → "is not allowed for this
  // user", forbidden queue → "does not match any of available queues"); kept as they are.
  const queue = resolveQueue(desc, ctx);
  if (!queue.ok) return queue;

  // A-REX 10-13.
  if (desc.preExecutables.length > 0) return itemFailure('CE_ERR_JOBDESC_PRE_EXECUTABLE');
  if (desc.postExecutables.length > 0) return itemFailure('CE_ERR_JOBDESC_POST_EXECUTABLE');
  if (desc.outputFiles.some((f) => f.options.creationFlag === 'append'))
    return itemFailure('CE_ERR_JOBDESC_CREATION_MODE');
  const slots = checkSlots(desc);
  if (slots) return slots;
  if (desc.coprocessor !== undefined && desc.coprocessor !== '') return itemFailure('CE_ERR_JOBDESC_COPROCESSOR');
  // Parsed (A-REX accepts both) but not acted on here: refused with the reason rather than
  // dropped, so a user relying on them learns it at submission.
  if (desc.notify.length > 0) return itemFailure('CE_ERR_JOBDESC_NOTIFY');
  if (desc.jobReportUrls.length > 0) return itemFailure('CE_ERR_JOBDESC_JOB_REPORT');

  // A-REX 14: main delegation = description, else the 1.1 parameter, else (only for
  // dynamic output lists) the first per-file delegation.
  const dynamic = desc.outputFiles.some((f) => f.name.startsWith('@'));
  let delegationId = desc.delegationId || ctx.requestDelegationId || undefined;
  if (delegationId === undefined && dynamic) delegationId = firstFileDelegation(desc);
  if (dynamic && delegationId === undefined) return itemFailure('CE_ERR_JOBDESC_DYNAMIC_OUTPUT');

  // Beyond A-REX: refuse now what would only fail the job later.
  const badScheme =
    ctx.transferScheme === undefined
      ? undefined
      : schemeProblem(desc, ctx.transferScheme, (url) => ctx.transferEndpoint?.(url, ctx.callerGroups));
  if (badScheme !== undefined) return badScheme;
  const badPath = sessionPathProblem(desc);
  if (badPath) return badPath;
  const enabled = new Set(ctx.runtimeEnvironments);
  const runtimeEnvironments = desc.runtimeEnvironments.filter((r) => enabled.has(r.name));
  const missing = desc.runtimeEnvironments.find((r) => !enabled.has(r.name) && r.optional !== true);
  if (missing)
    return itemFailure(
      'CE_ERR_JOBDESC_RTE_UNKNOWN',
      `Requested RunTimeEnvironment ${missing.name} is missing, broken or not enabled.`,
    );
  const limit = queueLimitProblem(desc, queue.limits);
  if (limit) return limit;

  const out: JobDescription = { ...desc, queue: queue.limits.name, runtimeEnvironments };
  if (delegationId !== undefined) out.delegationId = delegationId;
  if (
    out.lifetimeSeconds !== undefined &&
    ctx.maxLifetimeSeconds !== undefined &&
    out.lifetimeSeconds > ctx.maxLifetimeSeconds
  ) {
    out.lifetimeSeconds = ctx.maxLifetimeSeconds;
  }
  const maxRerun = ctx.maxRerun ?? DEFAULT_MAX_RERUN;
  if (out.rerun !== undefined && out.rerun > maxRerun) out.rerun = maxRerun;
  return { ok: true, description: out };
}

function resolveQueue(desc: JobDescription, ctx: AcceptanceContext): { ok: true; limits: QueueLimits } | ItemFailure {
  const allowed = (q: QueueLimits): boolean =>
    ctx.authorisedQueues === undefined || ctx.authorisedQueues.includes(q.name);
  const requested = desc.queue || ctx.requestQueue || ctx.defaultQueue || undefined;
  if (requested === undefined) {
    const q = ctx.queues.find(allowed);
    return q ? { ok: true, limits: q } : itemFailure('CE_ERR_JOBDESC_NO_QUEUE');
  }
  const q = findQueue(ctx.queues, requested);
  if (!q)
    return itemFailure('CE_ERR_JOBDESC_QUEUE_UNKNOWN', `Requested queue ${requested} is not allowed for this user`);
  if (!allowed(q)) return forbiddenQueue(requested, q, ctx);
  return { ok: true, limits: q };
}

/**
 * A queue that exists but is not open to the caller: A-REX's text first (clients match
 * it), then the queue, the groups it is open to, the caller's groups and the queues the
 * caller may use instead, so that the user knows what to ask the site for.
 */
function forbiddenQueue(requested: string, q: QueueLimits, ctx: AcceptanceContext): ItemFailure {
  const list = (xs: readonly string[] | undefined): string =>
    xs === undefined || xs.length === 0 ? 'none' : xs.join(', ');
  const open = ctx.queues.filter((x) => ctx.authorisedQueues === undefined || ctx.authorisedQueues.includes(x.name));
  return itemFailure(
    'CE_ERR_JOBDESC_QUEUE_FORBIDDEN',
    `Requested queue ${requested} does not match any of available queues: queue ${q.name} is open to the authorization groups ${list(q.allow)}, and the caller's groups are ${list(ctx.callerGroups)}; ` +
      `submit to a queue the caller may use (${list(open.map((x) => x.name))}), or ask the site to add one of the caller's groups to the queue's allow list`,
  );
}

/**
 * The queue named `name`; failing that, WLCG-style `<queue>_<VO>` names (DIRAC picks
 * shares that way) resolve to `<queue>`, trying the longest configured prefix first.
 */
function findQueue(queues: readonly QueueLimits[], name: string): QueueLimits | undefined {
  const exact = queues.find((q) => q.name === name);
  if (exact) return exact;
  for (let i = name.lastIndexOf('_'); i > 0; i = name.lastIndexOf('_', i - 1)) {
    const prefix = name.slice(0, i);
    const q = queues.find((x) => x.name === prefix);
    if (q) return q;
  }
  return undefined;
}

function checkSlots(desc: JobDescription): ItemFailure | undefined {
  const { count, countPerNode } = desc;
  // A-REX divides by SlotsPerHost: 0 crashes it. Refuse non-positive values instead.
  if ((count !== undefined && count < 1) || (countPerNode !== undefined && countPerNode < 1)) {
    return itemFailure(
      'CE_ERR_JOBDESC_SLOTS_INVALID',
      `NumberOfSlots (count) and SlotsPerHost (countpernode) must be at least 1, got ${count ?? '-'} and ${countPerNode ?? '-'}`,
    );
  }
  if (countPerNode !== undefined && count !== undefined && (countPerNode > count || count % countPerNode !== 0)) {
    return itemFailure('CE_ERR_JOBDESC_SLOTS');
  }
  return undefined;
}

function firstFileDelegation(desc: JobDescription): string | undefined {
  for (const f of desc.inputFiles) if (f.delegationId) return f.delegationId;
  for (const f of desc.outputFiles) if (f.delegationId) return f.delegationId;
  return undefined;
}

/** Whether a session-relative name climbs out of the session directory. */
export function leavesSession(name: string): boolean {
  if (name.includes('\0')) return true;
  for (const seg of name.split('/')) if (seg === '..') return true;
  return false;
}

/** The first input source or output target whose protocol staging cannot move, named. */
function schemeProblem(
  desc: JobDescription,
  known: (scheme: string) => boolean,
  refused: (url: string) => string | undefined,
): ItemFailure | undefined {
  const urls: [string, string][] = [];
  for (const f of desc.inputFiles) if (f.source !== undefined) urls.push([f.name, f.source]);
  for (const f of desc.outputFiles) if (f.target !== undefined) urls.push([f.name, f.target]);
  for (const [name, url] of urls) {
    const scheme = urlScheme(url);
    const file = name.replaceAll('\0', '\\0');
    if (scheme === undefined || scheme === 'file') continue;
    if (!known(scheme))
      return itemFailure(
        'CE_ERR_JOBDESC_SCHEME_UNSUPPORTED',
        `Protocol '${scheme}' of the URL for file '${file}' is not supported by this service`,
      );
    const why = refused(url);
    if (why !== undefined) return itemFailure('CE_ERR_JOBDESC_ENDPOINT_REFUSED', `File '${file}': ${why}`);
  }
  return undefined;
}

function sessionPathProblem(desc: JobDescription): ItemFailure | undefined {
  const names: string[] = [];
  for (const n of [desc.stdin, desc.stdout, desc.stderr, desc.logDir]) if (n !== undefined) names.push(n);
  for (const f of desc.inputFiles) names.push(f.name);
  for (const f of desc.outputFiles) names.push(f.name.startsWith('@') ? f.name.slice(1) : f.name);
  // The log directory is written by the service itself (src/jobs/gmlog.ts): it must name a
  // directory below the session, not the session itself ('.', '/') nor an absolute path.
  const log = desc.logDir;
  const badLog =
    log !== undefined && log !== '' && (log.startsWith('/') || log.split('/').every((s) => s === '' || s === '.'))
      ? log
      : undefined;
  const bad = badLog ?? names.find(leavesSession);
  return bad === undefined
    ? undefined
    : itemFailure(
        'CE_ERR_JOBDESC_BAD_PATH',
        `File name '${bad.replaceAll('\0', '\\0')}' must stay inside the session directory`,
      );
}

function queueLimitProblem(desc: JobDescription, q: QueueLimits): ItemFailure | undefined {
  const over = (what: string, value: number, max: number | undefined, unit: string): ItemFailure | undefined => {
    if (max === undefined || value <= max) return undefined;
    const batch =
      q.batchLimits?.of.has(what as BatchLimitName) === true ? `, the limit of ${q.batchLimits.source}` : '';
    return itemFailure(
      'CE_ERR_JOBDESC_QUEUE_LIMIT',
      `Requested ${what} (${value} ${unit}) exceeds the limit of queue ${q.name} (${max} ${unit}${batch})`,
    );
  };
  const w = desc.wallTimeSeconds;
  if (w !== undefined && q.minWallTimeSeconds !== undefined && w < q.minWallTimeSeconds) {
    return itemFailure(
      'CE_ERR_JOBDESC_QUEUE_LIMIT',
      `Requested wall time (${w} s) is below the minimum of queue ${q.name} (${q.minWallTimeSeconds} s)`,
    );
  }
  return (
    (w !== undefined ? over('wall time', w, q.maxWallTimeSeconds, 's') : undefined) ??
    (desc.cpuTimeSeconds !== undefined ? over('CPU time', desc.cpuTimeSeconds, q.maxCpuTimeSeconds, 's') : undefined) ??
    (desc.memoryBytes !== undefined ? over('memory', desc.memoryBytes, q.maxMemoryBytes, 'bytes') : undefined) ??
    (desc.count !== undefined ? over('slot count', desc.count, q.maxSlotsPerJob, 'slots') : undefined) ??
    (desc.memoryBytes !== undefined
      ? over('memory of the job', desc.memoryBytes * Math.max(1, desc.count ?? 1), q.maxJobMemoryBytes, 'bytes')
      : undefined) ??
    (desc.memoryBytes !== undefined ? overEveryNode(desc.memoryBytes, Math.max(1, desc.count ?? 1), q) : undefined)
  );
}

/**
 * The slots and the memory of a job together against each node (`nodeShapes`): under the most
 * CPUs and under the most memory, a job may still fit no single node, when one node has the
 * CPUs and another the memory. The limit named is the most memory of a node with enough CPUs.
 */
function overEveryNode(memoryPerSlot: number, slots: number, q: QueueLimits): ItemFailure | undefined {
  if (q.nodeShapes === undefined || q.nodeShapes.length === 0) return undefined;
  const memory = memoryPerSlot * slots;
  let most = -1;
  for (const n of q.nodeShapes) if (n.slots >= slots) most = Math.max(most, n.memoryBytes);
  // No node has the CPUs: the slot count's own limit says so (the largest node's CPUs).
  if (most < 0 || memory <= most) return undefined;
  return itemFailure(
    'CE_ERR_JOBDESC_QUEUE_LIMIT',
    `Requested memory of the job (${memory} bytes) exceeds the limit of queue ${q.name} for ${slots} slots ` +
      `(${most} bytes, the most memory of one node with ${slots} CPUs or more)`,
  );
}
