/** Snapshots and job views shared by the info tests. */
import type { ActivityView } from '../../src/info/activity-view.js';
import type { InfoSnapshot } from '../../src/info/info-snapshot.js';
import { tallyJobs, type JobTallyEntry } from '../../src/info/job-tally.js';
import { createInfoSource, type InfoSource } from '../../src/info/info-source.js';
import type { Config } from '../../src/config/schema.js';
import type { JobStore } from '../../src/store/job-store.js';

export const NOW = new Date('2026-11-21T22:19:14.678Z');
export const NOW_TEXT = '2026-11-21T22:19:14Z';
export const HOST = 'ce.example.org';
export const URL = 'https://ce.example.org:8443/arex';

export function snapshot(over: Partial<InfoSnapshot> = {}, jobs: readonly JobTallyEntry[] = []): InfoSnapshot {
  return {
    endpointUrl: URL,
    hostname: HOST,
    clusterName: 'testsite',
    implementationVersion: '0.1.0',
    now: NOW,
    startTime: new Date('2026-11-21T20:00:00Z'),
    validitySeconds: 10800,
    health: { state: 'ok' },
    servingState: 'production',
    queues: [
      {
        name: 'main',
        maxWallTimeSeconds: 86400,
        maxCpuTimeSeconds: 172800,
        maxMemoryBytes: 4 * 1024 ** 3,
        maxSlotsPerJob: 2,
      },
    ],
    runtimeEnvironments: [],
    jobs: tallyJobs(jobs),
    lrms: { name: 'fork' },
    totalSlots: 2,
    totalLogicalCpus: 2,
    host: {
      platform: 'amd64',
      totalInstances: 1,
      logicalCpus: 2,
      cpuVendor: 'GenuineIntel',
      cpuModel: 'Intel(R) Xeon(R) Processor',
      mainMemoryBytes: 8 * 1024 ** 3,
      osFamily: 'linux',
      osName: 'debian',
      osVersion: '12',
    },
    workingArea: {
      totalBytes: 252 * 1024 ** 3 + 5,
      freeBytes: 80 * 1024 ** 3 + 7,
      shared: true,
      lifetimeSeconds: 604800,
    },
    issuerCa: '/DC=org/DC=example/CN=Example CA',
    trustedCas: ['/DC=org/DC=example/CN=Example CA', '/DC=org/DC=other/CN=Other CA'],
    ...over,
  };
}

export const JOB_ID = 'a1b2c3d4e5f6a1b2c3d4e5f6';

/** A finished job with everything known. */
export function finishedJob(over: Partial<ActivityView> = {}): ActivityView {
  return {
    id: JOB_ID,
    name: 'tr-xrsl-1',
    descriptionLanguage: 'nordugrid:xrsl',
    restState: 'FINISHED',
    gmState: 'FINISHED',
    exitCode: 0,
    ownerDn: '/DC=org/DC=example/CN=Test User',
    localOwner: 'ceres',
    requestedWallTimeSeconds: 3600,
    requestedCpuTimeSeconds: 3600,
    requestedSlots: 1,
    stdout: 'out.txt',
    stderr: 'err.txt',
    logDir: 'gmlog',
    executionNodes: ['vm'],
    queue: 'main',
    localId: '4242',
    usedWallTimeSeconds: 2,
    usedCpuTimeSeconds: 1,
    usedMemoryKb: 2049,
    submissionTime: new Date('2026-11-21T22:19:16Z'),
    startTime: new Date('2026-11-21T22:19:18Z'),
    lrmsEndTime: new Date('2026-11-21T22:19:20Z'),
    endTime: new Date('2026-11-21T22:19:22Z'),
    workingAreaEraseTime: new Date('2026-11-28T22:19:22Z'),
    proxyExpirationTime: Date.parse('2036-11-18T22:07:46Z') / 1000,
    submissionHost: '127.0.0.1',
    delegationIds: ['0123456789ab'],
    ...over,
  };
}

/** The live info source over `store` (fork, no CAs), as the service builds it. */
export function liveSource(config: Config, store: JobStore): InfoSource {
  return createInfoSource({
    config,
    store,
    endpointUrl: () => 'https://ce.example.org/arex',
    hostname: 'ce.example.org',
    sessionSpace: () => ({ totalBytes: 100, freeBytes: 50 }),
    lrms: { name: 'fork' },
    trustedCas: [],
    startTime: new Date(0),
  });
}
