import type { ErrorTable } from './table.js';

/** Job submission and bulk job actions. */
export const jobErrors = {
  CE_ERR_JOB_MISSING_SUBRESOURCE: { status: 404, message: 'Missing job sub-resource' },
  CE_ERR_JOB_WRONG_SUBRESOURCE: { status: 404, message: 'Wrong job sub-resource requested' },
  CE_ERR_JOB_NOT_FOUND: { status: 404, message: 'Job not found' },
  CE_ERR_JOB_BAD_INSTANCES: { status: 400, message: 'Wrong number of instances specified' },
  CE_ERR_JOB_INSTANCES_WITH_BULK: {
    status: 400,
    message: 'No multiple descriptions and multiple instances simultaneously',
  },
  CE_ERR_JOB_TOO_MANY_INSTANCES: { status: 403, message: 'Number of requested instances exceeds allowed limit' },
  CE_ERR_JOB_BAD_ID_LIST: { status: 400, message: 'Malformed job id list' },
  CE_ERR_JOB_TOO_MANY_IDS: { status: 413, message: 'Too many job ids in one request' },
  CE_ERR_JOB_BAD_STATE_FILTER: { status: 400, message: 'Unknown job state in state filter' },
  CE_ERR_JOB_BAD_ID_LIST_TYPE: { status: 415, message: 'Job id list must be XML or JSON' },
  CE_ERR_JOB_DRAINING: { status: 503, message: 'The service is draining: no new jobs are accepted' },
  CE_ERR_JOB_NO_ROUTE: { status: 403, message: 'No configured route takes this job' },
  CE_ERR_JOB_BAD_RESUME_POINT: { status: 400, message: 'Malformed event id to resume after' },
  CE_ERR_JOB_TOO_MANY_STREAMS: { status: 429, message: 'Too many job event streams open for this identity' },
  CE_ERR_JOB_BAD_SINCE: { status: 400, message: 'Malformed since or cursor parameter' },
  CE_ERR_JOB_SINCE_EXPIRED: {
    status: 410,
    message: 'Changes since that point are no longer kept: list the jobs again',
  },
  // Per item, as the per-user job limit answers (503 `No more jobs allowed`): a limit
  // reached is a temporary condition of the service, the same description fits later.
  CE_ERR_JOB_ROUTE_FULL: { status: 503, message: 'No more jobs allowed: the route has its most waiting jobs' },
  CE_ERR_JOB_BAD_LIST_FILTER: { status: 400, message: 'Malformed job list filter or page size' },
  CE_ERR_JOB_BAD_CURSOR: { status: 400, message: 'Malformed job list cursor' },
  CE_ERR_JOB_NOT_MONITOR: { status: 403, message: 'The caller does not monitor the jobs of that VO' },
  CE_ERR_JOB_MONITOR_READ_ONLY: {
    status: 403,
    message: 'A monitor may list and follow this job, not act on it or read its files',
  },
  CE_ERR_JOB_BAD_BATCH: { status: 400, message: 'Malformed batch period of a job event stream' },
} as const satisfies ErrorTable;
