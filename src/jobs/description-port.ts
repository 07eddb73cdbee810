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
  return {
    split: (body) => splitSubmission(body, { maxDescriptionBytes: config.jobs.maxDescriptionBytes, maxItems: config.jobs.maxDescriptionsPerRequest }),
    accept: (desc, defaults) =>
      checkAcceptance(desc, {
        queues,
        defaultQueue: c.defaultQueue ?? c.queues[0]?.name,
        ...(defaults.queue !== undefined ? { requestQueue: defaults.queue } : {}),
        ...(defaults.delegationId !== undefined ? { requestDelegationId: defaults.delegationId } : {}),
        runtimeEnvironments: rtes,
        maxLifetimeSeconds: c.maxSessionLifetimeSeconds,
        maxRerun: config.engine.maxReruns,
      }),
  };
}
