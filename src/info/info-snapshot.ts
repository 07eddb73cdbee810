/**
 * Everything the service document publishes, gathered by the caller (configuration,
 * live job counters, host facts, disk figures) into one plain value. The builder
 * (info-document.ts) does no I/O and invents nothing: an optional field left out
 * here makes the corresponding GLUE2 element absent.
 */
import type { TimeValue } from './glue2-values.js';
import type { JobTally } from './job-tally.js';

/** GLUE2 Endpoint HealthState. The ARC broker only selects `ok` or `warning`. */
export type HealthState = 'ok' | 'warning' | 'critical' | 'unknown' | 'other';

/** GLUE2 ServingState: `production` accepts and runs jobs; `draining` runs but accepts none. */
export type ServingState = 'production' | 'draining' | 'queueing' | 'closed';

/** One configured batch queue, published as a ComputingShare. */
export interface QueueInfo {
  /** Queue name: the share's Name and MappingQueue (what clients put in `queue=`). */
  readonly name: string;
  readonly description?: string;
  readonly maxWallTimeSeconds?: number;
  readonly minWallTimeSeconds?: number;
  readonly defaultWallTimeSeconds?: number;
  readonly maxCpuTimeSeconds?: number;
  readonly maxMemoryBytes?: number;
  readonly maxSlotsPerJob?: number;
  /** Queue-level job limits, when the engine enforces any. */
  readonly maxTotalJobs?: number;
  readonly maxRunningJobs?: number;
  readonly maxWaitingJobs?: number;
  readonly maxUserRunningJobs?: number;
  /** Per-queue serving state; default: the service's. */
  readonly servingState?: ServingState;
  /** Free slots of this queue when the batch system says (a partition's idle CPUs); default: the service's. */
  readonly freeSlots?: number;
  /** Jobs of all users the batch system runs / keeps waiting in this queue (GLUE2 Local*Jobs). */
  readonly localRunningJobs?: number;
  readonly localWaitingJobs?: number;
  /**
   * The VOs whose members may use this queue (policies.ts): each gets a share
   * `<queue>_<vo>` with a MappingPolicy `vo:<vo>`, as A-REX publishes its advertised VOs.
   */
  readonly vos?: readonly string[];
}

/**
 * A route (docs/routes.md) published as a share of one Ceres queue it takes jobs from:
 * its MappingQueue is that queue (what a client names: the ARC client submits to the
 * MappingQueue of the share it chose, and Ceres routes the job on arrival). The limits
 * and figures given here replace the queue's; the others are the queue's.
 */
export interface RouteShareInfo {
  readonly route: string;
  /** The Ceres queue (a configured one). */
  readonly queue: string;
  /** The batch partition the route sends jobs to, when it names one. */
  readonly partition?: string;
  /** Rules of a MappingPolicy of scheme `basic` (`vo:atlas`, as ARC peers publish); none: no such policy. */
  readonly voRules: readonly string[];
  /** Rules of a MappingPolicy of scheme `org.glite.standard` for FQANs narrower than a VO (`VOMS:/atlas/Role=production`). */
  readonly fqanRules: readonly string[];
  readonly maxRunningJobs?: number;
  readonly maxWallTimeSeconds?: number;
  readonly maxSlotsPerJob?: number;
  readonly maxMemoryBytes?: number;
  /** The partition's figures when the batch system gives them. */
  readonly freeSlots?: number;
  readonly localRunningJobs?: number;
  readonly localWaitingJobs?: number;
  readonly servingState?: ServingState;
}

/** A configured runtime environment; `APPS/FOO-1.0` publishes AppName `APPS/FOO`, AppVersion `1.0`. */
export interface RuntimeEnvironmentInfo {
  readonly name: string;
  readonly description?: string;
}

/** The batch system ("local resource management system") jobs run in. */
export interface LrmsInfo {
  /** GLUE2 ProductName, e.g. `fork`, `slurm`; also part of the ComputingManager ID. */
  readonly name: string;
  readonly version?: string;
}

/** Facts about the execution machine (see host-facts.ts for reading them). */
export interface HostFacts {
  /** GLUE2 Platform, e.g. `amd64`, `aarch64`. */
  readonly platform?: string;
  /** Number of machines in the execution environment (1 for `fork`). */
  readonly totalInstances?: number;
  readonly physicalCpus?: number;
  readonly logicalCpus?: number;
  readonly cpuVendor?: string;
  readonly cpuModel?: string;
  readonly cpuClockMhz?: number;
  readonly mainMemoryBytes?: number;
  readonly virtualMemoryBytes?: number;
  /** GLUE2 OSFamily, e.g. `linux`. */
  readonly osFamily?: string;
  /** GLUE2 OSName, e.g. `debian`, `ubuntu`, `centos`. */
  readonly osName?: string;
  readonly osVersion?: string;
  /** Can jobs accept inbound / open outbound network connections. */
  readonly connectivityIn?: boolean;
  readonly connectivityOut?: boolean;
}

/** The working area (session directories). Sizes in bytes, published in GB. */
export interface WorkingAreaInfo {
  readonly totalBytes?: number;
  readonly freeBytes?: number;
  /** Session directories are visible to the execution machines (true for `fork`). */
  readonly shared?: boolean;
  /** How long a finished job's session directory is kept. */
  readonly lifetimeSeconds?: number;
}

export interface InfoSnapshot {
  /** The service endpoint URL clients submit to, `https://host:port/arex` (no trailing slash). */
  readonly endpointUrl: string;
  /** Host name used in the GLUE2 ids (`urn:ogf:...:<hostname>:...`). */
  readonly hostname: string;
  /** Site / cluster name: AdminDomain Name and ComputingService Name. */
  readonly clusterName: string;
  /** Ceres version (ComputingEndpoint ImplementationVersion). */
  readonly implementationVersion: string;
  /** When the document is made (CreationTime of every entity). */
  readonly now: TimeValue;
  /** When the service started (ComputingEndpoint StartTime). */
  readonly startTime?: TimeValue;
  /** Seconds the document is valid for (Validity of every entity). */
  readonly validitySeconds: number;
  readonly health: { readonly state: HealthState; readonly info?: string };
  readonly servingState: ServingState;
  readonly queues: readonly QueueInfo[];
  /** The routes' shares, in the routes' order (each follows its queue's shares); none: no routes. */
  readonly routeShares?: readonly RouteShareInfo[];
  readonly runtimeEnvironments: readonly RuntimeEnvironmentInfo[];
  /** Live job counters (job-tally.ts). */
  readonly jobs: JobTally;
  readonly lrms: LrmsInfo;
  /** Job slots the batch system offers in total (for `fork`: the usable CPUs). */
  readonly totalSlots?: number;
  /** Free slots as the batch system counts them; default: total slots less those of Ceres's running jobs. */
  readonly freeSlots?: number;
  /** Logical CPUs of all execution machines together. */
  readonly totalLogicalCpus?: number;
  readonly host: HostFacts;
  readonly workingArea?: WorkingAreaInfo;
  /** Subject DN of the host certificate's issuer, OpenSSL slash form (`/DC=org/CN=CA`). */
  readonly issuerCa?: string;
  /** Subject DNs of the trusted CAs, OpenSSL slash form (the ARC client keeps DN-like values only). */
  readonly trustedCas: readonly string[];
  /** Accepted job description languages; default `nordugrid:xrsl`, `emies:adl`. */
  readonly jobDescriptionLanguages?: readonly string[];
  /** Rules of every endpoint's AccessPolicy (`vo:atlas`, ...); none: no AccessPolicy. */
  readonly accessRules?: readonly string[];
  /** The LDAP GLUE2 endpoint (the resource BDII), when one is published. */
  readonly ldap?: { readonly url: string; readonly port: number };
}
