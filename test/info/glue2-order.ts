/**
 * A-REX's element order for the GLUE2 documents, written down independently of the
 * builders (from A-REX's GLUE2 printer order and its published document), so the
 * tests can check that what Ceres emits is a subsequence of it. Keys are
 * `Parent` or `Parent/Child` (for the Associations of a given entity).
 */
import { childElements, localName, type XmlElement } from '../../src/doc/element.js';

export const GLUE2_ORDER: Readonly<Record<string, readonly string[]>> = {
  InfoRoot: ['Domains'],
  Domains: ['AdminDomain'],
  AdminDomain: ['ID', 'Name', 'OtherInfo', 'Description', 'WWW', 'Distributed', 'Owner', 'Location', 'Contact', 'Services'],
  Services: ['Service', 'ComputingService'],
  ComputingService: [
    'ID', 'Name', 'OtherInfo', 'Capability', 'Type', 'QualityLevel', 'StatusInfo', 'Complexity', 'Location', 'Contact',
    'TotalJobs', 'RunningJobs', 'WaitingJobs', 'StagingJobs', 'SuspendedJobs', 'PreLRMSWaitingJobs',
    'ComputingEndpoint', 'ComputingShare', 'ComputingManager', 'ToStorageService', 'Associations',
  ],
  ComputingEndpoint: [
    'ID', 'Name', 'OtherInfo', 'URL', 'Capability', 'Technology', 'InterfaceName', 'InterfaceVersion', 'InterfaceExtension',
    'WSDL', 'SupportedProfile', 'Semantics', 'Implementor', 'ImplementationName', 'ImplementationVersion', 'QualityLevel',
    'HealthState', 'HealthStateInfo', 'ServingState', 'StartTime', 'IssuerCA', 'TrustedCA', 'DowntimeAnnounce',
    'DowntimeStart', 'DowntimeEnd', 'DowntimeInfo', 'AccessPolicy', 'Staging', 'JobDescription', 'TotalJobs', 'RunningJobs',
    'WaitingJobs', 'StagingJobs', 'SuspendedJobs', 'PreLRMSWaitingJobs', 'Associations', 'ComputingActivities',
  ],
  'ComputingEndpoint/Associations': ['ComputingShareID'],
  ComputingShare: [
    'ID', 'Name', 'OtherInfo', 'Description', 'MappingPolicy', 'MappingQueue', 'MaxWallTime', 'MaxMultiSlotWallTime',
    'MinWallTime', 'DefaultWallTime', 'MaxCPUTime', 'MaxTotalCPUTime', 'MinCPUTime', 'DefaultCPUTime', 'MaxTotalJobs',
    'MaxRunningJobs', 'MaxWaitingJobs', 'MaxPreLRMSWaitingJobs', 'MaxUserRunningJobs', 'MaxSlotsPerJob',
    'MaxStageInStreams', 'MaxStageOutStreams', 'SchedulingPolicy', 'MaxMainMemory', 'GuaranteedMainMemory',
    'MaxVirtualMemory', 'GuaranteedVirtualMemory', 'MaxDiskSpace', 'DefaultStorageService', 'Preemption', 'ServingState',
    'TotalJobs', 'RunningJobs', 'LocalRunningJobs', 'WaitingJobs', 'LocalWaitingJobs', 'SuspendedJobs',
    'LocalSuspendedJobs', 'StagingJobs', 'PreLRMSWaitingJobs', 'EstimatedAverageWaitingTime',
    'EstimatedWorstWaitingTime', 'FreeSlots', 'FreeSlotsWithDuration', 'UsedSlots', 'RequestedSlots',
    'ReservationPolicy', 'Tag', 'Associations',
  ],
  'ComputingShare/Associations': ['ComputingEndpointID', 'ExecutionEnvironmentID', 'ComputingActivityID'],
  ComputingManager: [
    'ID', 'Name', 'OtherInfo', 'ProductName', 'ProductVersion', 'Reservation', 'BulkSubmission', 'TotalPhysicalCPUs',
    'TotalLogicalCPUs', 'TotalSlots', 'SlotsUsedByLocalJobs', 'SlotsUsedByGridJobs', 'Homogeneous', 'NetworkInfo',
    'LogicalCPUDistribution', 'WorkingAreaShared', 'WorkingAreaGuaranteed', 'WorkingAreaTotal', 'WorkingAreaFree',
    'WorkingAreaLifeTime', 'WorkingAreaMultiSlotTotal', 'WorkingAreaMultiSlotFree', 'WorkingAreaMultiSlotLifeTime',
    'CacheTotal', 'CacheFree', 'TmpDir', 'ScratchDir', 'ApplicationDir', 'Benchmark', 'ExecutionEnvironments',
    'ApplicationEnvironments',
  ],
  ExecutionEnvironments: ['ExecutionEnvironment'],
  ExecutionEnvironment: [
    'ID', 'Name', 'OtherInfo', 'Platform', 'VirtualMachine', 'TotalInstances', 'UsedInstances', 'UnavailableInstances',
    'PhysicalCPUs', 'LogicalCPUs', 'CPUMultiplicity', 'CPUVendor', 'CPUModel', 'CPUVersion', 'CPUClockSpeed',
    'CPUTimeScalingFactor', 'WallTimeScalingFactor', 'MainMemorySize', 'VirtualMemorySize', 'OSFamily', 'OSName',
    'OSVersion', 'ConnectivityIn', 'ConnectivityOut', 'NetworkInfo', 'Benchmark', 'Associations',
  ],
  'ExecutionEnvironment/Associations': ['ComputingShareID', 'ComputingActivityID', 'ApplicationEnvironmentID'],
  Benchmark: ['ID', 'Name', 'OtherInfo', 'Type', 'Value'],
  ApplicationEnvironments: ['ApplicationEnvironment'],
  ApplicationEnvironment: [
    'ID', 'Name', 'OtherInfo', 'AppName', 'AppVersion', 'State', 'RemovalDate', 'License', 'Description', 'BestBenchmark',
    'ParallelSupport', 'MaxSlots', 'MaxJobs', 'MaxUserSeats', 'FreeSlots', 'FreeJobs', 'FreeUserSeats', 'Associations',
  ],
  'ApplicationEnvironment/Associations': ['ExecutionEnvironmentID'],
  'ComputingService/Associations': ['ServiceID'],
  ComputingActivity: [
    'ID', 'Name', 'OtherInfo', 'Type', 'IDFromEndpoint', 'LocalIDFromManager', 'JobDescription', 'State', 'RestartState',
    'ExitCode', 'ComputingManagerExitCode', 'Error', 'WaitingPosition', 'UserDomain', 'Owner', 'LocalOwner',
    'RequestedTotalWallTime', 'RequestedTotalCPUTime', 'RequestedSlots', 'RequestedApplicationEnvironment', 'StdIn',
    'StdOut', 'StdErr', 'LogDir', 'ExecutionNode', 'Queue', 'UsedTotalWallTime', 'UsedTotalCPUTime', 'UsedMainMemory',
    'SubmissionTime', 'ComputingManagerSubmissionTime', 'StartTime', 'ComputingManagerEndTime', 'EndTime',
    'WorkingAreaEraseTime', 'ProxyExpirationTime', 'SubmissionHost', 'SubmissionClientName', 'OtherMessages',
    'Associations',
  ],
  'ComputingActivity/Associations': ['UserDomainID', 'ComputingEndpointID', 'ComputingShareID', 'ExecutionEnvironmentID', 'ActivityID'],
};

/** Leaf elements (simple values) carry no order list; containers must have one. */
function orderFor(parent: string, name: string): readonly string[] | undefined {
  return GLUE2_ORDER[`${parent}/${name}`] ?? GLUE2_ORDER[name];
}

/**
 * Every violation of A-REX's order below `e`: an unknown child name, a child out of
 * order, or a container without a known order. Empty when the tree conforms.
 */
export function orderViolations(e: XmlElement, parent = '', path = localName(e)): string[] {
  const kids = childElements(e);
  if (kids.length === 0) return [];
  const name = localName(e);
  const order = orderFor(parent, name);
  if (!order) return [`${path}: container without a known order`];
  const out: string[] = [];
  let last = -1;
  for (const k of kids) {
    const kn = localName(k);
    const i = order.indexOf(kn);
    if (i < 0) out.push(`${path}/${kn}: not an A-REX child of ${name}`);
    else if (i < last) out.push(`${path}/${kn}: out of order (after ${order[last]})`);
    else last = i;
    out.push(...orderViolations(k, name, `${path}/${kn}`));
  }
  return out;
}

/** Child element names of `e`, in document order. */
export function childNames(e: XmlElement): string[] {
  return childElements(e).map(localName);
}
