/**
 * The GLUE2 service document served at `GET {base}/info`: A-REX's skeleton and
 * element order (InfoRoot / Domains / AdminDomain / Services / ComputingService with
 * one REST ComputingEndpoint, a ComputingShare per queue and the ComputingManager),
 * filled from an InfoSnapshot. Pure: no I/O, same snapshot, same tree.
 *
 * What the clients need from it (see docs/info-document.md):
 *  - ARC client (`arcinfo`, broker): ComputingEndpoint with InterfaceName
 *    `org.nordugrid.arcrest`, URL, capability `executionmanagement.jobcreation`,
 *    HealthState `ok`/`warning`; shares matched on MappingQueue; memory requests
 *    need MainMemorySize or MaxMainMemory; RTE requests need ApplicationEnvironments.
 *  - pyarcrest (JSON): ComputingService.ComputingShare[].Name (an object when there
 *    is one share), MaxWallTime, ComputingManager.ApplicationEnvironments
 *    .ApplicationEnvironment[].AppName/AppVersion.
 *
 * Invariant (glue2-elements.ts): unknown values and empty containers are left out.
 * The JSON rendering turns an empty element into a string, and pyarcrest walks the
 * containers with dict lookups (`.get("ApplicationEnvironments", {}).get(...)`),
 * which a string breaks; an absent container reads as "none".
 */
import { el, type XmlElement } from '../doc/element.js';
import {
  DEFAULT_INFO_VALIDITY_SECONDS,
  EXECUTION_ENVIRONMENT_NAME,
  GLUE2_NS,
  GLUE2_SCHEMA_LOCATION,
  IMPLEMENTATION_NAME,
  IMPLEMENTOR,
  JOB_DESCRIPTION_LANGUAGES,
  LDAP_CAPABILITIES,
  LDAP_ENDPOINT_NAME,
  LDAP_INTERFACE_NAME,
  LDAP_INTERFACE_VERSION,
  GLITE_POLICY_SCHEME,
  POLICY_SCHEME,
  REST_CAPABILITIES,
  REST_ENDPOINT_NAME,
  REST_EXTENSIONS,
  REST_INTERFACE_NAME,
  REST_INTERFACE_VERSIONS,
  RTE_STATE,
  SERVICE_TYPE,
  XSI_NS,
} from './glue2-constants.js';
import {
  accessPolicyId,
  adminDomainId,
  applicationEnvironmentId,
  ldapEndpointId,
  mappingPolicyId,
  voShareName,
  computingManagerId,
  computingServiceId,
  computingShareId,
  executionEnvironmentId,
  restEndpointId,
  routeMappingPolicyId,
  routeShareId,
} from './glue2-ids.js';
import { group, leaf, leaves, type MaybeElement } from './glue2-elements.js';
import { boolText, bytesToGb, bytesToMb, countText, glueTime, intText, nonEmpty } from './glue2-values.js';
import type { InfoSnapshot, QueueInfo, RouteShareInfo, RuntimeEnvironmentInfo } from './info-snapshot.js';
import { emptyCounters, routeShareKey, type JobCounters } from './job-tally.js';
import { splitRteName } from './rte-name.js';

interface Ctx {
  readonly s: InfoSnapshot;
  readonly host: string;
  readonly created: string | undefined;
  readonly validity: string;
  /** The REST endpoints' IDs (the shares' submission endpoints). */
  readonly restEndpointIds: readonly string[];
  readonly shareIds: readonly string[];
  readonly freeSlots: number | undefined;
}

/** Entity attributes in A-REX's order: BaseType, CreationTime, Validity. */
function entityAttrs(c: Ctx, baseType: string | undefined): Record<string, string> {
  const a: Record<string, string> = {};
  if (baseType !== undefined) a.BaseType = baseType;
  if (c.created !== undefined) a.CreationTime = c.created;
  a.Validity = c.validity;
  return a;
}

export function buildInfoDocument(s: InfoSnapshot): XmlElement {
  const host = s.hostname;
  const free =
    s.freeSlots ?? (s.totalSlots === undefined ? undefined : Math.max(0, s.totalSlots - s.jobs.all.usedSlots));
  const c: Ctx = {
    s,
    host,
    created: glueTime(s.now),
    validity: countText(s.validitySeconds) ?? String(DEFAULT_INFO_VALIDITY_SECONDS),
    restEndpointIds: REST_INTERFACE_VERSIONS.map((v) => restEndpointId(host, s.endpointUrl, v)),
    shareIds: s.queues.flatMap((q) => [
      computingShareId(host, q.name),
      ...(q.vos ?? []).map((vo) => computingShareId(host, voShareName(q.name, vo))),
      ...routeSharesOf(s, q).map((r) => routeShareId(host, r.route, r.queue)),
    ]),
    freeSlots: free,
  };
  const domains = el('Domains', [adminDomain(c)], {
    xmlns: GLUE2_NS,
    'xmlns:xsi': XSI_NS,
    'xsi:schemaLocation': GLUE2_SCHEMA_LOCATION,
  });
  return el('InfoRoot', [domains]);
}

function adminDomain(c: Ctx): XmlElement {
  return el(
    'AdminDomain',
    [leaf('ID', adminDomainId(c.s.clusterName)), leaf('Name', c.s.clusterName), el('Services', [computingService(c)])],
    entityAttrs(c, 'Domain'),
  );
}

function counters(j: JobCounters): XmlElement[] {
  return [
    el('TotalJobs', String(j.total)),
    el('RunningJobs', String(j.running)),
    el('WaitingJobs', String(j.waiting)),
    el('StagingJobs', String(j.staging)),
    el('SuspendedJobs', String(j.suspended)),
    el('PreLRMSWaitingJobs', String(j.preLrmsWaiting)),
  ];
}

function computingService(c: Ctx): XmlElement {
  const s = c.s;
  return el(
    'ComputingService',
    [
      leaf('ID', computingServiceId(c.host)),
      leaf('Name', s.clusterName),
      leaves('Capability', REST_CAPABILITIES),
      leaf('Type', SERVICE_TYPE),
      leaf('QualityLevel', 'production'),
      leaf(
        'Complexity',
        `endpoint=${c.restEndpointIds.length + (s.ldap ? 1 : 0)},share=${c.shareIds.length},resource=1`,
      ),
      counters(s.jobs.all),
      REST_INTERFACE_VERSIONS.map((v, i) => computingEndpoint(c, v, c.restEndpointIds[i]!)),
      s.ldap && ldapEndpoint(c, s.ldap),
      s.queues.map((q) => [
        computingShare(c, q),
        (q.vos ?? []).map((vo) => computingShare(c, q, { vo })),
        routeSharesOf(s, q).map((route) => computingShare(c, q, { route })),
      ]),
      computingManager(c),
    ],
    entityAttrs(c, 'Service'),
  );
}

/**
 * Every endpoint's AccessPolicy: the VOs the authorization admits (`vo:NAME`, what ARC
 * peers publish); none when no VO is named (GLUE2 Policy needs a Rule).
 */
function accessPolicy(c: Ctx): MaybeElement {
  const rules = c.s.accessRules ?? [];
  if (rules.length === 0) return undefined;
  return el(
    'AccessPolicy',
    [leaf('ID', accessPolicyId(c.host)), leaf('Scheme', POLICY_SCHEME), leaves('Rule', rules)],
    entityAttrs(c, 'Policy'),
  );
}

/** The LDAP GLUE2 endpoint: where a site BDII and `archery-manage` read this tree. */
function ldapEndpoint(c: Ctx, ldap: { readonly url: string; readonly port: number }): XmlElement {
  const s = c.s;
  return el(
    'ComputingEndpoint',
    [
      leaf('ID', ldapEndpointId(c.host, ldap.port)),
      leaf('Name', LDAP_ENDPOINT_NAME),
      leaf('URL', ldap.url),
      leaves('Capability', LDAP_CAPABILITIES),
      leaf('Technology', 'ldap'),
      leaf('InterfaceName', LDAP_INTERFACE_NAME),
      leaf('InterfaceVersion', LDAP_INTERFACE_VERSION),
      leaf('Implementor', IMPLEMENTOR),
      leaf('ImplementationName', IMPLEMENTATION_NAME),
      leaf('ImplementationVersion', nonEmpty(s.implementationVersion)),
      leaf('QualityLevel', 'production'),
      leaf('HealthState', 'ok'),
      leaf('ServingState', 'production'),
      accessPolicy(c),
    ],
    entityAttrs(c, 'Endpoint'),
  );
}

function computingEndpoint(c: Ctx, version: string, id: string): XmlElement {
  const s = c.s;
  return el(
    'ComputingEndpoint',
    [
      leaf('ID', id),
      leaf('Name', REST_ENDPOINT_NAME),
      leaf('URL', s.endpointUrl),
      leaves('Capability', REST_CAPABILITIES),
      leaf('Technology', 'rest'),
      leaf('InterfaceName', REST_INTERFACE_NAME),
      leaf('InterfaceVersion', version),
      leaves('InterfaceExtension', REST_EXTENSIONS),
      leaf('Implementor', IMPLEMENTOR),
      leaf('ImplementationName', IMPLEMENTATION_NAME),
      leaf('ImplementationVersion', nonEmpty(s.implementationVersion)),
      leaf('QualityLevel', 'production'),
      leaf('HealthState', s.health.state),
      leaf('HealthStateInfo', nonEmpty(s.health.info)),
      leaf('ServingState', s.servingState),
      leaf('StartTime', glueTime(s.startTime)),
      leaf('IssuerCA', nonEmpty(s.issuerCa)),
      leaves('TrustedCA', s.trustedCas),
      accessPolicy(c),
      leaf('Staging', 'staginginout'),
      leaves('JobDescription', s.jobDescriptionLanguages ?? JOB_DESCRIPTION_LANGUAGES),
      counters(s.jobs.all),
      group(
        'Associations',
        c.shareIds.map((id) => el('ComputingShareID', id)),
      ),
    ],
    entityAttrs(c, 'Endpoint'),
  );
}

/** The route shares of queue `q`, in the routes' order. */
function routeSharesOf(s: InfoSnapshot, q: QueueInfo): readonly RouteShareInfo[] {
  return (s.routeShares ?? []).filter((r) => r.queue === q.name);
}

/** The smaller of two limits, either of which may be unset. */
function tighter(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** A MappingPolicy of a share; none without rules (GLUE2 Policy needs a Rule). */
function mappingPolicy(c: Ctx, id: string, scheme: string, rules: readonly string[]): MaybeElement {
  if (rules.length === 0) return undefined;
  return el('MappingPolicy', [leaf('ID', id), leaf('Scheme', scheme), leaves('Rule', rules)], entityAttrs(c, 'Policy'));
}

/**
 * A queue's share; with `vo`, the share of that VO in the queue, which carries the VO's
 * MappingPolicy; with `route`, the share of a route in the queue (docs/routes.md): its
 * MappingPolicies name whom the route takes, its limits are the tighter of the queue's
 * and the route's, its job counters are the route's jobs in the queue, and its batch
 * figures those of the route's partition. Ceres does not count jobs per VO, so a VO
 * share has no job counters: unknown, not zero.
 */
function computingShare(
  c: Ctx,
  queue: QueueInfo,
  kind: { vo: string } | { route: RouteShareInfo } | undefined = undefined,
): XmlElement {
  const vo = kind !== undefined && 'vo' in kind ? kind.vo : undefined;
  const r = kind !== undefined && 'route' in kind ? kind.route : undefined;
  const q: QueueInfo =
    r === undefined
      ? queue
      : {
          ...queue,
          maxWallTimeSeconds: tighter(queue.maxWallTimeSeconds, r.maxWallTimeSeconds),
          maxSlotsPerJob: tighter(queue.maxSlotsPerJob, r.maxSlotsPerJob),
          maxMemoryBytes: tighter(queue.maxMemoryBytes, r.maxMemoryBytes),
          maxRunningJobs: tighter(queue.maxRunningJobs, r.maxRunningJobs),
          ...(r.partition !== undefined
            ? {
                freeSlots: r.freeSlots,
                localRunningJobs: r.localRunningJobs,
                localWaitingJobs: r.localWaitingJobs,
                // A drained queue drains its routes; else the partition's state, else the service's.
                servingState: queue.servingState === 'draining' ? 'draining' : r.servingState,
              }
            : {}),
        };
  const name = vo !== undefined ? voShareName(q.name, vo) : (r?.route ?? q.name);
  const id = r !== undefined ? routeShareId(c.host, r.route, q.name) : computingShareId(c.host, name);
  const j =
    vo !== undefined
      ? undefined
      : r !== undefined
        ? (c.s.jobs.byRoute.get(routeShareKey(r.route, q.name)) ?? emptyCounters())
        : (c.s.jobs.byQueue.get(q.name) ?? emptyCounters());
  const n = (x: number | undefined): string | undefined => (x === undefined ? undefined : String(x));
  return el(
    'ComputingShare',
    [
      leaf('ID', id),
      leaf('Name', name),
      leaf(
        'Description',
        r !== undefined
          ? `route ${r.route}${r.partition !== undefined ? ` (partition ${r.partition})` : ''}`
          : nonEmpty(q.description),
      ),
      vo !== undefined && mappingPolicy(c, mappingPolicyId(c.host, vo), POLICY_SCHEME, [`vo:${vo}`]),
      r !== undefined && [
        mappingPolicy(c, routeMappingPolicyId(c.host, r.route, q.name, 'basic'), POLICY_SCHEME, r.voRules),
        mappingPolicy(c, routeMappingPolicyId(c.host, r.route, q.name, 'glite'), GLITE_POLICY_SCHEME, r.fqanRules),
      ],
      leaf('MappingQueue', q.name),
      leaf('MaxWallTime', countText(q.maxWallTimeSeconds)),
      leaf('MinWallTime', countText(q.minWallTimeSeconds)),
      leaf('DefaultWallTime', countText(q.defaultWallTimeSeconds)),
      leaf('MaxCPUTime', countText(q.maxCpuTimeSeconds)),
      leaf('MaxTotalJobs', countText(q.maxTotalJobs)),
      leaf('MaxRunningJobs', countText(q.maxRunningJobs)),
      leaf('MaxWaitingJobs', countText(q.maxWaitingJobs)),
      leaf('MaxUserRunningJobs', countText(q.maxUserRunningJobs)),
      leaf('MaxSlotsPerJob', countText(q.maxSlotsPerJob)),
      leaf('MaxMainMemory', countText(bytesToMb(q.maxMemoryBytes))),
      leaf('ServingState', q.servingState ?? c.s.servingState),
      leaf('TotalJobs', n(j?.total)),
      leaf('RunningJobs', n(j?.running)),
      leaf('LocalRunningJobs', countText(q.localRunningJobs)),
      leaf('WaitingJobs', n(j?.waiting)),
      leaf('LocalWaitingJobs', countText(q.localWaitingJobs)),
      leaf('SuspendedJobs', n(j?.suspended)),
      leaf('StagingJobs', n(j?.staging)),
      leaf('PreLRMSWaitingJobs', n(j?.preLrmsWaiting)),
      // Without the batch system's per-queue figure the slots are the machine's, shared by all queues.
      leaf('FreeSlots', countText(q.freeSlots ?? c.freeSlots)),
      leaf('FreeSlotsWithDuration', countText(q.freeSlots ?? c.freeSlots)),
      leaf('UsedSlots', n(j?.usedSlots)),
      leaf('RequestedSlots', n(j?.requestedSlots)),
      el('Associations', [
        c.restEndpointIds.map((id) => el('ComputingEndpointID', id)),
        el('ExecutionEnvironmentID', executionEnvironmentId(c.host)),
      ]),
    ],
    entityAttrs(c, 'Share'),
  );
}

function computingManager(c: Ctx): XmlElement {
  const s = c.s;
  const wa = s.workingArea;
  return el(
    'ComputingManager',
    [
      leaf('ID', computingManagerId(c.host, s.lrms.name)),
      leaf('ProductName', s.lrms.name),
      leaf('ProductVersion', nonEmpty(s.lrms.version)),
      leaf('BulkSubmission', 'false'),
      leaf('TotalLogicalCPUs', countText(s.totalLogicalCpus)),
      leaf('TotalSlots', countText(s.totalSlots)),
      el('SlotsUsedByGridJobs', String(s.jobs.all.usedSlots)),
      // One ExecutionEnvironment is published, so the resources are homogeneous by construction.
      leaf('Homogeneous', 'true'),
      leaf('WorkingAreaShared', boolText(wa?.shared)),
      leaf('WorkingAreaTotal', countText(bytesToGb(wa?.totalBytes))),
      leaf('WorkingAreaFree', countText(bytesToGb(wa?.freeBytes))),
      leaf('WorkingAreaLifeTime', countText(wa?.lifetimeSeconds)),
      el('ExecutionEnvironments', [executionEnvironment(c)]),
      group(
        'ApplicationEnvironments',
        s.runtimeEnvironments.map((r, i) => applicationEnvironment(c, r, i)),
      ),
    ],
    entityAttrs(c, 'Manager'),
  );
}

function executionEnvironment(c: Ctx): XmlElement {
  const h = c.s.host;
  return el(
    'ExecutionEnvironment',
    [
      leaf('ID', executionEnvironmentId(c.host)),
      leaf('Name', EXECUTION_ENVIRONMENT_NAME),
      leaf('Platform', nonEmpty(h.platform)),
      leaf('TotalInstances', countText(h.totalInstances)),
      leaf('PhysicalCPUs', countText(h.physicalCpus)),
      leaf('LogicalCPUs', countText(h.logicalCpus)),
      leaf('CPUVendor', nonEmpty(h.cpuVendor)),
      leaf('CPUModel', nonEmpty(h.cpuModel)),
      // os.cpus() reports speed 0 when the kernel does not expose it: unknown, not 0 MHz.
      leaf('CPUClockSpeed', h.cpuClockMhz !== undefined && h.cpuClockMhz > 0 ? intText(h.cpuClockMhz) : undefined),
      leaf('MainMemorySize', countText(bytesToMb(h.mainMemoryBytes))),
      leaf('VirtualMemorySize', countText(bytesToMb(h.virtualMemoryBytes))),
      leaf('OSFamily', nonEmpty(h.osFamily)),
      leaf('OSName', nonEmpty(h.osName)),
      leaf('OSVersion', nonEmpty(h.osVersion)),
      leaf('ConnectivityIn', boolText(h.connectivityIn)),
      leaf('ConnectivityOut', boolText(h.connectivityOut)),
      group(
        'Associations',
        c.shareIds.map((id) => el('ComputingShareID', id)),
      ),
    ],
    entityAttrs(c, 'Resource'),
  );
}

function applicationEnvironment(c: Ctx, r: RuntimeEnvironmentInfo, index: number): XmlElement {
  const { appName, appVersion } = splitRteName(r.name);
  return el(
    'ApplicationEnvironment',
    [
      leaf('ID', applicationEnvironmentId(c.host, index)),
      leaf('AppName', appName),
      leaf('AppVersion', appVersion),
      leaf('State', RTE_STATE),
      leaf('Description', nonEmpty(r.description)),
      el('Associations', [el('ExecutionEnvironmentID', executionEnvironmentId(c.host))]),
    ],
    // GLUE2 ApplicationEnvironment is a plain Entity: creation time and validity, no BaseType.
    entityAttrs(c, undefined),
  );
}
