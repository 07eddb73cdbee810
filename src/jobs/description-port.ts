/**
 * The jobs service's view of the job-description layer: split + parse (src/jobdesc)
 * and the acceptance checks with this service's configuration.
 */
import type { Config } from '../config/schema.js';
import { splitSubmission } from '../jobdesc/split-submission.js';
import { checkAcceptance } from '../jobdesc/check-acceptance.js';
import type { DescriptionPort } from './ports.js';

export function descriptionPort(config: Config): DescriptionPort {
  const c = config.cluster;
  const queues = c.queues.map((q) => ({ ...q }));
  const rtes = c.runtimeEnvironments.map((r) => r.name);
  const configured = c.defaultQueue ?? c.queues[0]?.name;
  // The configured default when the caller may use it, else the first queue it may use
  // (none: the item fails with "no queue ... allowed for this user").
  const defaultQueueFor = (allowed: readonly string[] | undefined): { defaultQueue?: string } => {
    const q = allowed === undefined || (configured !== undefined && allowed.includes(configured)) ? configured : c.queues.find((x) => allowed.includes(x.name))?.name;
    return q === undefined ? {} : { defaultQueue: q };
  };
  return {
    split: (body) => splitSubmission(body, { maxDescriptionBytes: config.jobs.maxDescriptionBytes, maxItems: config.jobs.maxDescriptionsPerRequest }),
    accept: (desc, defaults) =>
      checkAcceptance(desc, {
        queues,
        ...defaultQueueFor(defaults.authorisedQueues),
        ...(defaults.queue !== undefined ? { requestQueue: defaults.queue } : {}),
        ...(defaults.delegationId !== undefined ? { requestDelegationId: defaults.delegationId } : {}),
        ...(defaults.authorisedQueues !== undefined ? { authorisedQueues: defaults.authorisedQueues } : {}),
        runtimeEnvironments: rtes,
        maxLifetimeSeconds: c.maxSessionLifetimeSeconds,
        maxRerun: config.engine.maxReruns,
      }),
  };
}
