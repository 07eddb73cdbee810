import type { ErrorTable } from './table.js';

/**
 * Job description parsing and acceptance checks.
 *
 * Whole-request codes (the body as a whole is unusable) are 4xx HTTP statuses. Per-item
 * codes become the `status-code` of one job item in the submission answer; they are all
 * strictly greater than 400 because DIRAC treats an item as failed only when
 * `status-code > "400"` (a string comparison), so a per-item 400 would read as success.
 * Per-item messages are A-REX's reason texts where it has one: clients log and match them.
 */
export const jobdescErrors = {
  // Whole request.
  CE_ERR_JOBDESC_MISSING_PAYLOAD: { status: 400, message: 'Missing payload' },
  CE_ERR_JOBDESC_EMPTY_PAYLOAD: { status: 400, message: 'Payload is empty' },
  CE_ERR_JOBDESC_UNRECOGNIZED: { status: 400, message: 'Payload is not recognized' },
  CE_ERR_JOBDESC_INVALID_UTF8: { status: 400, message: 'Payload is not valid UTF-8' },
  CE_ERR_JOBDESC_MULTI_XRSL_SYNTAX: { status: 400, message: 'Multi-request xRSL could not be parsed' },
  CE_ERR_JOBDESC_TOO_MANY_ITEMS: { status: 413, message: 'Too many job descriptions in one request' },
  // Per item: the description itself.
  CE_ERR_JOBDESC_TOO_BIG: { status: 413, message: 'Job description is too big' },
  CE_ERR_JOBDESC_XML_MALFORMED: { status: 422, message: 'Unable to parse job description.' },
  CE_ERR_JOBDESC_ADL_INVALID: { status: 422, message: 'emies:adl parsing error' },
  CE_ERR_JOBDESC_XRSL_INVALID: { status: 422, message: 'nordugrid:xrsl parsing error' },
  CE_ERR_JOBDESC_NOT_RECOGNISED: {
    status: 422,
    message: 'No job description parser was able to interpret job description',
  },
  // Per item: acceptance checks, in A-REX's order.
  CE_ERR_JOBDESC_RTE_UNRESOLVED: { status: 422, message: 'Runtime environments have not been resolved.' },
  CE_ERR_JOBDESC_ACL_NO_CONTENT: { status: 422, message: 'acl element wrongly formatted - missing Content element' },
  CE_ERR_JOBDESC_ACL_TYPE: { status: 422, message: 'ARC: unsupported ACL type specified' },
  CE_ERR_JOBDESC_WRONG_ACTION: { status: 422, message: 'Wrong action in job request' },
  CE_ERR_JOBDESC_NO_QUEUE: { status: 403, message: 'Request has no queue defined and none is allowed for this user' },
  CE_ERR_JOBDESC_QUEUE_FORBIDDEN: { status: 403, message: 'Requested queue does not match any of available queues' },
  CE_ERR_JOBDESC_QUEUE_UNKNOWN: { status: 422, message: 'Requested queue is not allowed for this user' },
  CE_ERR_JOBDESC_PRE_EXECUTABLE: { status: 422, message: 'Pre-executables are not supported by this service' },
  CE_ERR_JOBDESC_POST_EXECUTABLE: { status: 422, message: 'Post-executables are not supported by this service' },
  CE_ERR_JOBDESC_CREATION_MODE: { status: 422, message: 'Unsupported creation mode for Target' },
  CE_ERR_JOBDESC_SLOTS: { status: 422, message: 'SlotsPerHost exceeding NumberOfSlots is not supported' },
  CE_ERR_JOBDESC_SLOTS_INVALID: { status: 422, message: 'NumberOfSlots and SlotsPerHost must be at least 1' },
  CE_ERR_JOBDESC_COPROCESSOR: { status: 422, message: 'Coprocessor is not supported yet.' },
  CE_ERR_JOBDESC_DYNAMIC_OUTPUT: {
    status: 422,
    message: 'Dynamic output files and no delegation assigned to job are incompatible.',
  },
  // Per item: checks A-REX does not make at submission (it fails the job later instead).
  CE_ERR_JOBDESC_BAD_PATH: { status: 422, message: 'File name must stay inside the session directory' },
  CE_ERR_JOBDESC_RTE_UNKNOWN: {
    status: 422,
    message: 'Requested RunTimeEnvironment is missing, broken or not enabled.',
  },
  CE_ERR_JOBDESC_QUEUE_LIMIT: { status: 422, message: 'Requested resources exceed the limits of the queue' },
  CE_ERR_JOBDESC_NOTIFY: {
    status: 422,
    message:
      'E-mail notification (notify) is not supported by this service: remove the attribute; the job state can be polled',
  },
  CE_ERR_JOBDESC_JOB_REPORT: {
    status: 422,
    message:
      'Job reports to accounting services (jobreport, RemoteLogging) are not sent by this service: remove the attribute; the site publishes accounting records itself',
  },
  CE_ERR_JOBDESC_SCHEME_UNSUPPORTED: {
    status: 422,
    message: 'A file URL uses a protocol this service cannot transfer (no native support and no gfal2 plugin for it)',
  },
  CE_ERR_JOBDESC_ENDPOINT_REFUSED: {
    status: 422,
    message:
      "A file URL names a storage endpoint this service has no keys for, or whose keys are not open to the caller's authorization groups (S3)",
  },
  // A Kubernetes site runs an RTE as the image configured for it (lrms.kubernetes.runtimeEnvironments).
  CE_ERR_JOBDESC_RTE_NO_IMAGE: {
    status: 422,
    message: 'Requested RunTimeEnvironment has no container image on this Kubernetes site',
  },
  CE_ERR_JOBDESC_RTE_IMAGES_CONFLICT: {
    status: 422,
    message: 'Requested RunTimeEnvironments need different container images; a job runs in one',
  },
} as const satisfies ErrorTable;
