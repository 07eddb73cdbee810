/**
 * Wiring of the job engine (scheduler + batch backend + data staging) for the
 * composition root.
 */
import { shareSettings } from './share-settings.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { JobStore } from '../store/job-store.js';
import type { ControlDir } from '../store/control-dir.js';
import type { JobRecord } from '../store/job-record.js';
import type { EnginePort } from '../jobs/ports.js';
import type { StateLayout } from '../process/layout.js';
import type { SessionDirs } from '../sessions/session-dirs.js';
import type { DelegationsWiring } from './delegations.js';
import { Scheduler, type SchedulerOptions } from '../engine/scheduler/scheduler.js';
import type { Limits } from '../engine/scheduler/slots.js';
import type { BatchCommandObserver } from '../lrms/core/command-observer.js';
import { createBatchBackend } from '../lrms/create-backend.js';
import type { BatchBackend, BatchClusterInfo } from '../lrms/backend.js';
import type { BatchQueueLimits } from '../jobs/description-port.js';
import type { StagingPort } from '../engine/scheduler/ports.js';
import { createStagingPort, type StagingDeps, type StagingWiring } from '../engine/scheduler/staging-port.js';
import { JobCredentials } from '../accounts/job-credentials.js';
import type { AccountResolver } from '../accounts/resolve-account.js';
import { writeGmlog } from '../jobs/gmlog.js';
import type { WaitCounts } from '../jobs/wait-reason.js';

export interface EngineWiring {
  readonly port: EnginePort;
  readonly lrmsInfo: { name: string; version?: string };
  /** The running batch backend (undefined before start): the readiness check asks it. */
  backend(): BatchBackend | undefined;
  /** The batch system's own view of its queues and slots, when the backend gives one. */
  clusterInfo(): BatchClusterInfo | undefined;
  /** What the batch system gives a job of `queue` at most (its partition's), when it says. */
  queueLimits(queue: string): BatchQueueLimits | undefined;
  /** The counts why a job waits reads (src/jobs/wait-reason.ts); undefined until the engine has started. */
  waitCounts(): WaitCounts | undefined;
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
  /** Local accounts by name, with the configured policy (accounts.minUid). */
  accounts: AccountResolver;
  /** The account jobs without one run as (a root service without a mapping), else undefined. */
  defaultAccount: string | undefined;
  /** A job run reached a final state (accounting). */
  onEnded?: (job: JobRecord) => Promise<unknown>;
  /** Tests may replace data staging. */
  staging?: StagingPort;
  /** Observers (metrics): the backend as the engine uses it, job state changes, staging results. */
  observe?: {
    readonly backend: (b: BatchBackend) => BatchBackend;
    /** For a backend that runs commands: each one reported by name (src/lrms/core/command-observer.ts). */
    readonly commands: (backend: string) => BatchCommandObserver;
    readonly transition: NonNullable<SchedulerOptions['onTransition']>;
    readonly staged: NonNullable<StagingDeps['onResult']>;
  };
}

export function createEngine(d: EngineDeps): EngineWiring {
  let scheduler: Scheduler | undefined;
  let ready = false;
  let staging: StagingWiring | undefined;
  let backend: BatchBackend | undefined;
  const pending: string[] = [];
  // Read per use: the limits are reloadable (live-config.ts).
  const limits: Limits = {
    get maxActive() {
      return d.config.engine.maxActiveJobs;
    },
    get maxPreparing() {
      return d.config.engine.maxPreparingJobs;
    },
    get maxRunning() {
      return d.config.engine.maxRunningJobs;
    },
    get maxFinishing() {
      return d.config.engine.maxFinishingJobs;
    },
    get maxPerUser() {
      return d.config.engine.maxJobsPerUser;
    },
    get maxRunningPerUser() {
      return d.config.engine.maxRunningJobsPerUser;
    },
  };
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
    waitCounts() {
      if (!ready || scheduler === undefined) return undefined;
      const slots = staging?.stageInSlots();
      return { ...scheduler.waitCounts(), ...(slots !== undefined ? { stageInSlots: slots } : {}) };
    },
    backend: () => backend,
    clusterInfo: () => backend?.clusterInfo?.(),
    queueLimits(queue) {
      const p = backend?.clusterInfo?.()?.queues.find((x) => x.name === queue);
      if (p === undefined) return undefined;
      const lrms = d.config.lrms.backend;
      return {
        // Kubernetes has no partitions: its limits are those of its largest schedulable node.
        source:
          lrms === 'kubernetes'
            ? 'the largest Kubernetes node'
            : `${lrms === 'slurm' ? 'Slurm' : lrms} partition ${queue}`,
        maxWallTimeSeconds: p.maxWallTimeSeconds,
        maxMemoryBytes: p.largestNodeMemoryBytes,
        // A partition without CPUs (all its nodes down) says nothing about what it can give.
        maxSlotsPerJob: p.maxSlotsPerJob ?? (p.totalSlots > 0 ? p.totalSlots : undefined),
        maxJobMemoryBytes: p.maxJobMemoryBytes,
        nodeShapes: p.nodeShapes,
      };
    },
    async start() {
      const created = await createBatchBackend(
        d.config.lrms,
        d.layout.lrms,
        d.log.child({ part: 'lrms' }),
        d.observe?.commands(d.config.lrms.backend),
        d.accounts,
        d.config.cluster.queues.map((q) => q.name),
      );
      // The batch system's queues and limits before the service says it is ready (the
      // readiness check waits for `backend`, the start line for start()): the first info
      // document and the first submission's limit checks have them (docs/batch-backends.md).
      await created.refreshClusterInfo?.();
      backend = d.observe ? d.observe.backend(created) : created;
      const port: StagingPort =
        d.staging ??
        (staging = await createStagingPort({
          config: d.config,
          control: d.control,
          sessions: d.sessions,
          credentials: { credentialFor: (id, owner) => d.delegations.credentialFor(id, owner) },
          log: d.log.child({ part: 'staging' }),
          cacheDir: d.layout.cache,
          // The site's CA directory (not the development PKI's): storage is verified against it.
          ...(d.config.tls.caDir !== undefined ? { certDir: d.config.tls.caDir } : {}),
          ...(d.observe ? { onResult: d.observe.staged } : {}),
        }));
      const credentials = await JobCredentials.open({
        dir: d.layout.jobCredentials,
        source: { credentialFor: (id, owner) => d.delegations.credentialFor(id, owner) },
        accounts: d.accounts,
        log: d.log.child({ part: 'engine' }),
      });
      d.delegations.onRenewed((id) => void credentials.refresh(id));
      scheduler = new Scheduler({
        credentials,
        store: d.store,
        control: d.control,
        backend,
        staging: port,
        limits,
        shares: shareSettings(() => d.config),
        log: d.log.child({ part: 'engine' }),
        sessions: d.sessions,
        lrmsJobsRoot: join(d.layout.lrms, 'jobs'),
        rteScripts: new Map(d.config.cluster.runtimeEnvironments.map((r) => [r.name, r.script])),
        serviceUrl: d.serviceUrl,
        defaultAccount: d.defaultAccount,
        sessionLifetimeSeconds: d.config.cluster.sessionLifetimeSeconds,
        maxSessionLifetimeSeconds: d.config.cluster.maxSessionLifetimeSeconds,
        wipedRetentionSeconds: d.config.jobs.wipedRecordRetentionSeconds,
        cancelTimeoutSeconds: d.config.engine.cancelTimeoutSeconds,
        ...(d.observe ? { onTransition: d.observe.transition } : {}),
        ...(d.onEnded ? { onEnded: d.onEnded } : {}),
        onLogged: (j) => writeGmlog({ control: d.control, sessions: d.sessions, serviceUrl: d.serviceUrl }, j),
      });
      await scheduler.start();
      ready = true;
      if (pending.length) scheduler.jobsSubmitted(pending.splice(0));
    },
    async stop() {
      await scheduler?.stop();
      await staging?.close();
    },
  };
}
