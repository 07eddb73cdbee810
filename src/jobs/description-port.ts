/**
 * The jobs service's view of the job-description layer: split + parse (src/jobdesc)
 * and the acceptance checks with this service's configuration.
 */
import type { Config } from '../config/schema.js';
import { splitSubmission } from '../jobdesc/split-submission.js';
import { checkAcceptance } from '../jobdesc/check-acceptance.js';
import type { DescriptionPort } from './ports.js';

export function descriptionPort(config: Config): DescriptionPort {
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
      return checkAcceptance(desc, {
        queues: c.queues,
        ...defaultQueueFor(c, defaults.authorisedQueues),
        ...(defaults.queue !== undefined ? { requestQueue: defaults.queue } : {}),
        ...(defaults.delegationId !== undefined ? { requestDelegationId: defaults.delegationId } : {}),
        ...(defaults.authorisedQueues !== undefined ? { authorisedQueues: defaults.authorisedQueues } : {}),
        ...(defaults.callerGroups !== undefined ? { callerGroups: defaults.callerGroups } : {}),
        runtimeEnvironments: c.runtimeEnvironments.map((r) => r.name),
        maxLifetimeSeconds: c.maxSessionLifetimeSeconds,
        maxRerun: config.engine.maxReruns,
      });
    },
  };
}
