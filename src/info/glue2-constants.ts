/**
 * Fixed names of the GLUE2 documents Ceres publishes (the service document at
 * `{base}/info` and the per-job ComputingActivity). Values that clients match on
 * (interface name, capabilities, state prefixes) live here so that the builders and
 * the tests use one spelling.
 */

/** GLUE2 2.0 namespace, as A-REX declares it on `Domains` and on `ComputingActivity`. */
export const GLUE2_NS = 'http://schemas.ogf.org/glue/2009/03/spec_2.0_r1';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';
export const GLUE2_SCHEMA_LOCATION = 'https://raw.github.com/OGF-GLUE/XSD/master/schema/GLUE2.xsd';

/** The ARC client's REST plugins only pick endpoints with exactly this (lower-cased) name. */
export const REST_INTERFACE_NAME = 'org.nordugrid.arcrest';
export const REST_INTERFACE_VERSIONS: readonly string[] = ['1.0', '1.1'];

/**
 * The REST endpoint's capabilities, in A-REX's order. The broker ignores an endpoint
 * without `executionmanagement.jobcreation` (or `jobexecution`).
 */
export const REST_CAPABILITIES: readonly string[] = [
  'executionmanagement.jobcreation',
  'executionmanagement.jobdescription',
  'executionmanagement.jobmanagement',
  'information.discovery.resource',
  'information.discovery.job',
  'information.lookup.job',
  'security.delegation',
];

/**
 * Ceres's extensions of the REST interface, announced as the REST endpoints' GLUE2
 * InterfaceExtension (URIs, as the schema asks; docs/compatibility.md): a client looks for
 * one of these before using it. Each changes nothing for a request that does not use it.
 */
export const REST_EXTENSIONS: readonly string[] = [
  // GET jobs with Accept: text/event-stream (state=, id=, Last-Event-ID / last_event_id=).
  'urn:ceres:rest:job-event-stream:1',
  // action=status and info with since=N and an empty id list; the ceres-sequence header.
  'urn:ceres:rest:changed-since:1',
  // GET jobs with name=, queue=, vo=, submitted-since=, changed-since=, limit= and cursor=;
  // the ceres-next-cursor header.
  'urn:ceres:rest:job-list-filters:1',
  // monitor=<vo> on the list, the stream, since= and action=status|info (authorization.monitors).
  'urn:ceres:rest:job-monitoring:1',
  // PATCH of a session file with Content-Range or offset=.
  'urn:ceres:rest:session-patch:1',
  // batch=<ms> on the event stream: events gathered for up to that long, one write.
  'urn:ceres:rest:job-event-batch:1',
];

/** Job description languages accepted at `jobs?action=new`, as GLUE2 JobDescription values. */
export const JOB_DESCRIPTION_LANGUAGES: readonly string[] = ['nordugrid:xrsl', 'emies:adl'];

/** GLUE2 ComputingService Type of an A-REX-compatible execution service. */
export const SERVICE_TYPE = 'org.nordugrid.arex';

/** Name of the single ExecutionEnvironment (the machine the jobs run on). */
export const EXECUTION_ENVIRONMENT_NAME = 'execenv0';

/** GLUE2 ApplicationEnvironment State of a configured runtime environment. */
export const RTE_STATE = 'installednotverified';

/** Default document validity in seconds (A-REX's info provider uses 10800). */
export const DEFAULT_INFO_VALIDITY_SECONDS = 10800;

/**
 * Validity of a per-job ComputingActivity. Ceres builds it from the live job record
 * at each request (A-REX reads a file its info provider rewrites every minute or so),
 * so it is valid for a short time only; 60 s is what A-REX states for its own
 * live-built fallback document.
 */
export const DEFAULT_ACTIVITY_VALIDITY_SECONDS = 60;

/** ComputingEndpoint Name of the REST interface (names the interface, as A-REX does). */
export const REST_ENDPOINT_NAME = 'ARC REST';
export const IMPLEMENTOR = 'Ceres';
export const IMPLEMENTATION_NAME = 'ceres';

/** The LDAP GLUE2 endpoint (resource BDII): the interface name ARC clients and archery-manage know. */
export const LDAP_INTERFACE_NAME = 'org.nordugrid.ldapglue2';
export const LDAP_INTERFACE_VERSION = '1.0';
export const LDAP_ENDPOINT_NAME = 'Ceres LDAP GLUE2 resource information';
export const LDAP_CAPABILITIES: readonly string[] = ['information.discovery.resource'];

/** The one policy scheme ARC peers publish: rules `vo:NAME`. */
export const POLICY_SCHEME = 'basic';
/** The scheme whose rules name FQANs (`VOMS:/atlas/Role=production`), as gLite-era peers publish them. */
export const GLITE_POLICY_SCHEME = 'org.glite.standard';
