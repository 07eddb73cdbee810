/**
 * The jobs service's view of the job-description layer: split + parse (src/jobdesc)
 * and the acceptance checks with this service's configuration.
 */
import type { Config } from '../config/schema.js';
import { splitSubmission } from '../jobdesc/split-submission.js';
import {
  checkAcceptance,
  type AcceptanceResult,
  type BatchLimitName,
  type NodeShape,
  type QueueLimits,
} from '../jobdesc/check-acceptance.js';
import type { DescriptionPort } from './ports.js';
import type { JobDescription } from '../vocabulary/job-description.js';
import { itemFailure } from '../jobdesc/item-failure.js';
import { chooseRteImage, type RteImages } from '../lrms/kubernetes/rte-images.js';

/**
 * On a Kubernetes site an RTE runs as its configured image: one without an image is refused
 * now, naming it, rather than failing the job at its creation (an optional one is dropped, as
 * an optional RTE that is not enabled is); so are RTEs that need two images.
 */
function withRteImage(desc: JobDescription, images: RteImages): AcceptanceResult {
  const runtimeEnvironments = desc.runtimeEnvironments.filter(
    (r) => r.optional !== true || Object.hasOwn(images, r.name),
  );
  const choice = chooseRteImage(
    images,
    runtimeEnvironments.map((r) => r.name),
  );
  if (choice.ok) return { ok: true, description: { ...desc, runtimeEnvironments } };
  return choice.problem === 'no-image'
    ? itemFailure(
        'CE_ERR_JOBDESC_RTE_NO_IMAGE',
        `Requested RunTimeEnvironment ${choice.names[0] ?? ''} has no container image on this Kubernetes site`,
      )
    : itemFailure(
        'CE_ERR_JOBDESC_RTE_IMAGES_CONFLICT',
        `Requested RunTimeEnvironments ${choice.names.join(' and ')} need different container images`,
      );
}

/** What the batch system lets a job of one queue have at most (src/lrms: its partition's limits and nodes). */
export interface BatchQueueLimits {
  /** Where the limits come from, for the refusal: `Slurm partition debug`. */
  readonly source: string;
  readonly maxWallTimeSeconds?: number | undefined;
  /** Per slot: the memory of the largest node. */
  readonly maxMemoryBytes?: number | undefined;
  readonly maxSlotsPerJob?: number | undefined;
  /** The whole job's, where a job runs on one node (Kubernetes). */
  readonly maxJobMemoryBytes?: number | undefined;
  /** Each node's CPUs and memory together, where a job runs on one node (Kubernetes). */
  readonly nodeShapes?: readonly NodeShape[] | undefined;
}

const BATCH_KEYS = [
  ['maxWallTimeSeconds', 'wall time'],
  ['maxMemoryBytes', 'memory'],
  ['maxSlotsPerJob', 'slot count'],
  ['maxJobMemoryBytes', 'memory of the job'],
] as const;

/** A configured queue with the batch system's limits where they are lower (or the only ones). */
function withBatchLimits(q: QueueLimits, b: BatchQueueLimits | undefined): QueueLimits {
  if (b === undefined) return q;
  const out: QueueLimits = { ...q };
  const of = new Set<BatchLimitName>();
  for (const [key, what] of BATCH_KEYS) {
    const limit = b[key];
    const configured = q[key];
    if (limit !== undefined && (configured === undefined || limit < configured)) {
      out[key] = limit;
      of.add(what);
    }
  }
  // The batch system's alone: the configuration has no nodes.
  if (b.nodeShapes !== undefined && b.nodeShapes.length > 0) out.nodeShapes = b.nodeShapes;
  return of.size > 0 ? { ...out, batchLimits: { source: b.source, of } } : out;
}

/**
 * `batchLimits`: what the batch system gives a queue at most, asked per submission (the
 * backend keeps it current); a job over it is refused at once instead of failing at the
 * batch system's submission.
 */
export function descriptionPort(
  config: Config,
  batchLimits?: (queue: string) => BatchQueueLimits | undefined,
  transferScheme?: (scheme: string) => boolean,
  transferEndpoint?: (url: string, callerGroups: readonly string[] | undefined) => string | undefined,
): DescriptionPort {
  // Looked up per submission: queues and the description caps are reloadable (live-config.ts).
  // The configured default when the caller may use it, else the first queue it may use
  // (none: the item fails with "no queue ... allowed for this user").
  const defaultQueueFor = (c: Config['cluster'], allowed: readonly string[] | undefined): { defaultQueue?: string } => {
    const configured = c.defaultQueue ?? c.queues[0]?.name;
    const q =
      allowed === undefined || (configured !== undefined && allowed.includes(configured))
        ? configured
        : c.queues.find((x) => allowed.includes(x.name))?.name;
    return q === undefined ? {} : { defaultQueue: q };
  };
  return {
    split: (body) =>
      splitSubmission(body, {
        maxDescriptionBytes: config.jobs.maxDescriptionBytes,
        maxItems: config.jobs.maxDescriptionsPerRequest,
      }),
    accept: (desc, defaults) => {
      const c = config.cluster;
      const accepted = checkAcceptance(desc, {
        queues: batchLimits === undefined ? c.queues : c.queues.map((q) => withBatchLimits(q, batchLimits(q.name))),
        ...defaultQueueFor(c, defaults.authorisedQueues),
        ...(defaults.queue !== undefined ? { requestQueue: defaults.queue } : {}),
        ...(defaults.delegationId !== undefined ? { requestDelegationId: defaults.delegationId } : {}),
        ...(defaults.authorisedQueues !== undefined ? { authorisedQueues: defaults.authorisedQueues } : {}),
        ...(defaults.callerGroups !== undefined ? { callerGroups: defaults.callerGroups } : {}),
        runtimeEnvironments: c.runtimeEnvironments.map((r) => r.name),
        maxLifetimeSeconds: c.maxSessionLifetimeSeconds,
        maxRerun: config.engine.maxReruns,
        ...(transferScheme !== undefined ? { transferScheme } : {}),
        ...(transferEndpoint !== undefined ? { transferEndpoint } : {}),
      });
      return accepted.ok && config.lrms.backend === 'kubernetes'
        ? withRteImage(accepted.description, config.lrms.kubernetes.runtimeEnvironments)
        : accepted;
    },
  };
}
