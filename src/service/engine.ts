/**
 * Wiring of the job engine (scheduler + batch backend + data staging) for the
 * composition root.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { JobStore } from '../store/job-store.js';
import type { ControlDir } from '../store/control-dir.js';
import type { EnginePort } from '../jobs/ports.js';
import type { StateLayout } from './layout.js';
import type { SessionDirs } from '../sessions/session-dirs.js';
import type { DelegationsWiring } from './delegations.js';
import { Scheduler } from '../engine/scheduler/scheduler.js';
import { createBatchBackend } from '../lrms/create-backend.js';
import type { BatchBackend, BatchClusterInfo } from '../lrms/backend.js';
import type { StagingPort } from '../engine/scheduler/ports.js';
import { createStagingPort, type StagingWiring } from '../engine/scheduler/staging-port.js';
import { JobCredentials } from '../accounts/job-credentials.js';
import { AccountResolver } from '../accounts/resolve-account.js';

export interface EngineWiring {
  readonly port: EnginePort;
  readonly lrmsInfo: { name: string; version?: string };
  /** The batch system's own view of its queues and slots, when the backend gives one. */
  clusterInfo(): BatchClusterInfo | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface EngineDeps {
  config: Config;
  store: JobStore;
  control: ControlDir;
  log: Logger;
  layout: StateLayout;
  delegations: DelegationsWiring;
  sessions: SessionDirs;
  serviceUrl: () => string;
  /** Tests may replace data staging. */
  staging?: StagingPort;
}

export function createEngine(d: EngineDeps): EngineWiring {
  let scheduler: Scheduler | undefined;
  let ready = false;
  let staging: StagingWiring | undefined;
  let backendRef: BatchBackend | undefined;
  const pending: string[] = [];
  const e = d.config.engine;
  return {
    // Requests are served while the engine starts (the listener opens first), so until
    // the scheduler has finished resuming jobs (backend recovery before any cancel),
    // requests' events are queued and handed over afterwards.
    port: {
      jobsSubmitted: (ids) => (ready && scheduler ? scheduler.jobsSubmitted(ids) : void pending.push(...ids)),
      jobPoked: (id) => {
        staging?.poked(id);
        if (ready && scheduler) scheduler.poke(id);
        else pending.push(id);
      },
    },
    lrmsInfo: { name: d.config.lrms.backend },
    clusterInfo: () => backendRef?.clusterInfo?.(),
    async start() {
      const backend = await createBatchBackend(d.config.lrms, d.layout.lrms, d.log.child({ part: 'lrms' }));
      backendRef = backend;
      const port: StagingPort = d.staging ?? (staging = await createStagingPort({ config: d.config, control: d.control, sessions: d.sessions, credentials: { credentialFor: (id, owner) => d.delegations.credentialFor(id, owner) }, log: d.log.child({ part: 'staging' }), cacheDir: d.layout.cache }));
      const credentials = await JobCredentials.open({
        dir: d.layout.jobCredentials,
        source: { credentialFor: (id, owner) => d.delegations.credentialFor(id, owner) },
        accounts: new AccountResolver(),
        log: d.log.child({ part: 'engine' }),
      });
      d.delegations.onRenewed((id) => void credentials.refresh(id));
      scheduler = new Scheduler({
        credentials,
        store: d.store,
        control: d.control,
        backend,
        staging: port,
        limits: { maxActive: e.maxActiveJobs, maxPreparing: e.maxPreparingJobs, maxRunning: e.maxRunningJobs, maxFinishing: e.maxFinishingJobs, maxPerUser: e.maxJobsPerUser, maxRunningPerUser: e.maxRunningJobsPerUser },
        log: d.log.child({ part: 'engine' }),
        sessions: d.sessions,
        lrmsJobsRoot: join(d.layout.lrms, 'jobs'),
        rteScripts: new Map(d.config.cluster.runtimeEnvironments.map((r) => [r.name, r.script])),
        serviceUrl: d.serviceUrl,
        sessionLifetimeSeconds: d.config.cluster.sessionLifetimeSeconds,
        maxSessionLifetimeSeconds: d.config.cluster.maxSessionLifetimeSeconds,
        wipedRetentionSeconds: d.config.jobs.wipedRecordRetentionSeconds,
        cancelTimeoutSeconds: e.cancelTimeoutSeconds,
      });
      await scheduler.start();
      ready = true;
      if (pending.length) scheduler.jobsSubmitted(pending.splice(0));
    },
    async stop() {
      await scheduler?.stop();
    },
  };
}
