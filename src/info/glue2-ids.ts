/**
 * GLUE2 identifiers, in A-REX's URN forms so that ids read the same on both
 * implementations. The service document and the per-job ComputingActivity share
 * them (a job's Associations/ComputingShareID names its queue's share).
 */
import { EXECUTION_ENVIRONMENT_NAME, REST_INTERFACE_NAME } from './glue2-constants.js';

export const adminDomainId = (name: string): string => `urn:ad:${name}`;
export const computingServiceId = (host: string): string => `urn:ogf:ComputingService:${host}:arex`;
/** One REST ComputingEndpoint per interface version (the LDAP schema holds one version per endpoint). */
export const restEndpointId = (host: string, url: string, version: string): string =>
  `urn:ogf:ComputingEndpoint:${host}:rest:${url}:${version}`;
export const ldapEndpointId = (host: string, port: number): string => `urn:ogf:Endpoint:${host}:ldapglue2:${port}`;
/** One AccessPolicy per endpoint, all with this ID (as A-REX): its DN is what tells them apart. */
export const accessPolicyId = (host: string): string => `urn:ogf:AccessPolicy:${host}:basic`;
export const mappingPolicyId = (host: string, vo: string): string => `urn:ogf:MappingPolicy:${host}:basic:${vo}`;
/** Name of the share of `vo` in `queue` (A-REX's form). */
export const voShareName = (queue: string, vo: string): string => `${queue}_${vo}`;
export const computingShareId = (host: string, queue: string): string => `urn:ogf:ComputingShare:${host}:${queue}`;
/**
 * A route's share in a queue. `route:` and the colons keep it apart from every queue share
 * and VO share (`<queue>`, `<queue>_<vo>`): queue and route names have no colon.
 */
export const routeShareId = (host: string, route: string, queue: string): string =>
  computingShareId(host, `route:${route}:${queue}`);
/** The MappingPolicies of a route's share, one per scheme (`basic`, `glite`). */
export const routeMappingPolicyId = (host: string, route: string, queue: string, scheme: string): string =>
  `urn:ogf:MappingPolicy:${host}:route:${route}:${queue}:${scheme}`;
export const computingManagerId = (host: string, lrms: string): string => `urn:ogf:ComputingManager:${host}:${lrms}`;
export const executionEnvironmentId = (host: string): string =>
  `urn:ogf:ExecutionEnvironment:${host}:${EXECUTION_ENVIRONMENT_NAME}`;
export const applicationEnvironmentId = (host: string, index: number): string =>
  `urn:ogf:ApplicationEnvironment:${host}:rte:${index}`;
/** ComputingActivity ID of a job submitted through the REST interface. */
export const computingActivityId = (host: string, jobId: string): string =>
  `urn:caid:${host}:${REST_INTERFACE_NAME}:${jobId}`;
export const idFromEndpoint = (jobId: string): string => `urn:idfe:${jobId}`;
