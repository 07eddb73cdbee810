/**
 * Builds the configured batch backend. The composition root calls this once; the
 * engine sees only the BatchBackend interface. A new backend is one more case (CONTRIBUTING.md, "A new batch backend").
 * A backend other than the default (fork) is imported only when configured: a site on
 * the fork backend never loads the Slurm code (docs/performance.md, "Memory").
 */
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { BatchBackend } from './backend.js';
import type { BatchCommandObserver } from './core/command-observer.js';
import { ForkBackend } from './fork/fork-backend.js';
import type { BackendLog } from './core/backend-log.js';
import type { AccountResolver } from '../accounts/resolve-account.js';

/**
 * `lrmsRoot` is the state layout's `lrms` directory; each backend works in a subdirectory.
 * `commands`: where a backend that runs batch commands reports each one (metrics); the
 * fork backend runs none. `accounts`: local accounts by name with the site's policy
 * (never root, not below `accounts.minUid`), shared with the rest of the service.
 * `queues`: the configured queue names, which a backend without partitions of its own
 * (Kubernetes) publishes with its cluster's figures.
 */
export async function createBatchBackend(
  config: Config['lrms'],
  lrmsRoot: string,
  log?: BackendLog,
  commands?: BatchCommandObserver,
  accounts?: AccountResolver,
  queues?: readonly string[],
): Promise<BatchBackend> {
  switch (config.backend) {
    case 'fork':
      return ForkBackend.create({
        workDir: join(lrmsRoot, 'fork'),
        ...config.fork,
        ...(log ? { log } : {}),
        ...(accounts ? { accounts } : {}),
      });
    case 'slurm': {
      const { SlurmBackend } = await import('./slurm/slurm-backend.js');
      return SlurmBackend.create({
        workDir: join(lrmsRoot, 'slurm'),
        ...config.slurm,
        ...(log ? { log } : {}),
        ...(commands ? { commands } : {}),
        ...(accounts ? { accounts } : {}),
      });
    }
    case 'gridengine': {
      const { GridEngineBackend } = await import('./gridengine/gridengine-backend.js');
      return GridEngineBackend.create({
        workDir: join(lrmsRoot, 'gridengine'),
        ...config.gridengine,
        ...(log ? { log } : {}),
        ...(commands ? { commands } : {}),
        ...(accounts ? { accounts } : {}),
      });
    }
    case 'kubernetes': {
      const { KubernetesBackend } = await import('./kubernetes/kubernetes-backend.js');
      return KubernetesBackend.create({
        workDir: join(lrmsRoot, 'kubernetes'),
        ...config.kubernetes,
        ...(queues ? { queues } : {}),
        ...(log ? { log } : {}),
        ...(accounts ? { accounts } : {}),
      });
    }
  }
}
