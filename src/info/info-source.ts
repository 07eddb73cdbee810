/**
 * Feeds the GLUE2 builder (src/info) with live figures: configuration, job counters
 * from the store (the jobs not in a final state: all the tally counts), host facts (read
 * once), working-area space. The document is cached
 * for one second: brokers poll it, and counters a second old are live enough. The
 * endpoint URL may follow the origin the client addressed, so the cache is per URL
 * (a few entries: a client that varies its Host header only costs itself rebuilds).
 */
import { availableParallelism } from 'node:os';
import type { Config } from '../config/schema.js';
import type { XmlElement } from '../doc/element.js';
import { buildInfoDocument } from './info-document.js';
import { readHostFacts } from './host-facts.js';
import { tallyJobs, type JobTallyEntry } from './job-tally.js';
import { lrmsLetter } from '../vocabulary/job-states.js';
import type { JobStore } from '../store/job-store.js';
import { CERES_VERSION } from '../config/version.js';
import type { BatchClusterInfo } from '../lrms/backend.js';
import type { HostFacts, QueueInfo } from './info-snapshot.js';
import { voPolicies } from './vo-policies.js';
import { routeShares } from './route-shares.js';
import { listRoutes } from '../jobs/routes.js';

const MAX_CACHED_URLS = 8;

export interface InfoSource {
  /**
   * The current GLUE2 `InfoRoot` document (may be cached briefly by the source).
   * `addressedOrigin`: the origin the client addressed (`https://host[:port]`).
   */
  document(addressedOrigin?: string): XmlElement;
}

export interface InfoSourceOptions {
  readonly config: Config;
  readonly store: JobStore;
  /** The endpoint URL to publish, given the origin the client addressed (if known). */
  readonly endpointUrl: (addressedOrigin?: string) => string;
  readonly hostname: string;
  /** Size and free space of the file system holding the sessions (through the kept folder handle). */
  readonly sessionSpace: () => { totalBytes: number; freeBytes: number };
  readonly lrms: { name: string; version?: string };
  readonly issuerCa?: string | undefined;
  readonly trustedCas: readonly string[];
  readonly startTime: Date;
  readonly health?: () => { state: 'ok' | 'warning' | 'critical'; info?: string };
  /** Drained queues ('' = the whole service): published as ServingState `draining`. */
  readonly drainedQueues?: () => readonly string[];
  /** What the batch system says about its queues and slots (a cached value; undefined: describe this host). */
  readonly cluster?: () => BatchClusterInfo | undefined;
}

export function createInfoSource(o: InfoSourceOptions): InfoSource {
  const host = readHostFacts();
  const cache = new Map<string, { at: number; doc: XmlElement }>();
  return {
    document(addressedOrigin?: string): XmlElement {
      const now = Date.now();
      const endpointUrl = o.endpointUrl(addressedOrigin);
      const cached = cache.get(endpointUrl);
      if (cached && now - cached.at < 1000) return cached.doc;
      const entries: JobTallyEntry[] = [];
      for (const r of o.store.countActiveByState()) {
        const e: JobTallyEntry = {
          gmState: r.state,
          pending: r.pending !== 0,
          queue: r.queue,
          ...(r.route !== null ? { route: r.route } : {}),
          ...(r.lrmsState ? { lrmsState: lrmsLetter(r.lrmsState) } : {}),
        };
        for (let i = 0; i < r.n; i++) entries.push(e);
      }
      const routes = listRoutes(o.config);
      let space: { totalBytes: number; freeBytes: number } | undefined;
      try {
        space = o.sessionSpace();
      } catch {
        space = undefined;
      }
      const c = o.config.cluster;
      const drained = o.drainedQueues?.() ?? [];
      const lrms = o.cluster?.();
      const policies = voPolicies(o.config.authorization, c.queues);
      const ldap = o.config.infosys.ldap;
      const doc = buildInfoDocument({
        endpointUrl,
        hostname: o.hostname,
        clusterName: c.name,
        implementationVersion: CERES_VERSION,
        now: new Date(now),
        startTime: o.startTime,
        validitySeconds: 60,
        health: o.health?.() ?? { state: 'ok' },
        servingState: drained.includes('') ? 'draining' : 'production',
        queues: c.queues.map((q) => ({
          ...batchQueueFacts(lrms, q.name),
          ...q,
          ...fewerSlots(q.maxSlotsPerJob, lrms?.queues.find((x) => x.name === q.name)?.maxSlotsPerJob),
          ...enforcedLimits(o.config.engine),
          ...(drained.includes(q.name) ? { servingState: 'draining' as const } : {}),
          vos: policies.queueVos.get(q.name) ?? [],
        })),
        routeShares: routeShares(
          routes,
          o.config.authorization,
          c.queues.map((q) => q.name),
          (p) => batchQueueFacts(lrms, p),
        ),
        accessRules: policies.accessRules,
        ...(ldap.enabled ? { ldap: { url: ldapUrl(ldap.bindAddress || o.hostname, ldap.port), port: ldap.port } } : {}),
        runtimeEnvironments: publishedRtes(o.config).map((r) => ({
          name: r.name,
          ...(r.description !== undefined ? { description: r.description } : {}),
        })),
        jobs: tallyJobs(entries),
        lrms: o.lrms,
        totalSlots: lrms?.totalSlots ?? availableParallelism(),
        ...(lrms ? { freeSlots: lrms.freeSlots } : {}),
        totalLogicalCpus: lrms?.totalSlots ?? availableParallelism(),
        host: executionHost(host, lrms),
        workingArea: { ...(space ?? {}), shared: true, lifetimeSeconds: c.sessionLifetimeSeconds },
        ...(o.issuerCa !== undefined ? { issuerCa: o.issuerCa } : {}),
        trustedCas: o.trustedCas,
      });
      if (cache.size >= MAX_CACHED_URLS) cache.clear();
      cache.set(endpointUrl, { at: now, doc });
      return doc;
    },
  };
}

/**
 * The ExecutionEnvironment: this host, with the batch system's node count; or, when the batch
 * system describes its nodes (Kubernetes), only what it says (this host's CPU model and OS are
 * not the pods').
 */
function executionHost(host: HostFacts, lrms: BatchClusterInfo | undefined): HostFacts {
  if (!lrms) return host;
  if (lrms.executionEnvironment) return { ...lrms.executionEnvironment, totalInstances: lrms.totalNodes };
  return { ...host, totalInstances: lrms.totalNodes };
}

/** The RTEs a job may name: on a Kubernetes site only those with a container image (the others are refused). */
function publishedRtes(config: Config): Config['cluster']['runtimeEnvironments'] {
  const all = config.cluster.runtimeEnvironments;
  if (config.lrms.backend !== 'kubernetes') return all;
  const images = config.lrms.kubernetes.runtimeEnvironments;
  return all.filter((r) => Object.hasOwn(images, r.name));
}

/** The LDAP GLUE2 endpoint's URL: the tree from o=glue, as ARC peers publish it. */
function ldapUrl(host: string, port: number): string {
  return `ldap://${host.includes(':') ? `[${host}]` : host}:${port}/o=glue`;
}

/** A queue's limits, free slots and job counts as the batch system reports them (configured values win). */
function batchQueueFacts(lrms: BatchClusterInfo | undefined, name: string): Partial<QueueInfo> {
  const p = lrms?.queues.find((x) => x.name === name);
  if (!p) return {};
  return {
    ...(p.maxWallTimeSeconds !== undefined ? { maxWallTimeSeconds: p.maxWallTimeSeconds } : {}),
    ...(p.defaultWallTimeSeconds !== undefined ? { defaultWallTimeSeconds: p.defaultWallTimeSeconds } : {}),
    ...(p.maxSlotsPerJob !== undefined ? { maxSlotsPerJob: p.maxSlotsPerJob } : {}),
    freeSlots: p.up ? p.freeSlots : 0,
    localRunningJobs: p.runningJobs,
    localWaitingJobs: p.waitingJobs,
    ...(p.up ? {} : { servingState: 'closed' as const }),
  };
}

/**
 * The queue's MaxSlotsPerJob where the batch system's is lower than the configured one: a
 * submission is checked against the lower (description-port.ts), so that is what is published.
 */
function fewerSlots(configured: number | undefined, batch: number | undefined): { maxSlotsPerJob?: number } {
  return configured !== undefined && batch !== undefined && batch < configured ? { maxSlotsPerJob: batch } : {};
}

/** The engine's limits every queue is subject to, as GLUE2 publishes them (only those set). */
function enforcedLimits(e: { readonly maxRunningJobs: number; readonly maxRunningJobsPerUser: number }): {
  maxRunningJobs?: number;
  maxUserRunningJobs?: number;
} {
  return {
    ...(e.maxRunningJobs > 0 ? { maxRunningJobs: e.maxRunningJobs } : {}),
    ...(e.maxRunningJobsPerUser > 0 ? { maxUserRunningJobs: e.maxRunningJobsPerUser } : {}),
  };
}
