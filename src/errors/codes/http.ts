import type { ErrorTable } from './table.js';

/** Transport, routing and content errors (issue: service foundation). */
export const httpErrors = {
  CE_ERR_HTTP_NOT_FOUND: { status: 404, message: 'Not Found' },
  CE_ERR_HTTP_VERSION_NOT_SUPPORTED: { status: 404, message: 'Version Not Supported' },
  CE_ERR_HTTP_FUNCTIONALITY_NOT_SUPPORTED: { status: 404, message: 'Functionality Not Supported' },
  CE_ERR_HTTP_METHOD_NOT_ALLOWED: { status: 405, message: 'Method Not Allowed' },
  CE_ERR_HTTP_ACTION_MISSING: { status: 400, message: 'Missing action parameter' },
  CE_ERR_HTTP_ACTION_UNKNOWN: { status: 400, message: 'Action not implemented' },
  CE_ERR_HTTP_BAD_REQUEST: { status: 400, message: 'Bad Request' },
  CE_ERR_HTTP_BAD_QUERY: { status: 400, message: 'Malformed query parameter' },
  CE_ERR_HTTP_BODY_TOO_LARGE: { status: 413, message: 'Request body too large' },
  CE_ERR_HTTP_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Media Type' },
  CE_ERR_HTTP_SCHEMA_NOT_SUPPORTED: { status: 400, message: 'Schema not implemented' },
  CE_ERR_INFO_SCHEMA_NOT_OFFERED: { status: 501, message: 'Schema crr is recognised but not offered' },
  CE_ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'Request body not received in time' },
  CE_ERR_HTTP_SHUTTING_DOWN: { status: 503, message: 'Service is shutting down' },
  CE_ERR_INTERNAL: { status: 500, message: 'Internal Server Error' },
  CE_ERR_HTTP_CROSS_SITE: { status: 403, message: 'Cross-site request refused' },
  CE_ERR_HTTP_TOO_MANY_REQUESTS: { status: 429, message: 'Too many requests in progress for this identity' },
  CE_ERR_HTTP_TOO_MANY_CONNECTIONS: { status: 503, message: 'Too many connections for this identity' },
  CE_ERR_HTTP_CLIENT_ABORTED: {
    status: 400,
    message: 'The client closed the connection before the request was complete',
  },
  CE_ERR_HTTP_BODY_TOO_SLOW: { status: 408, message: 'Request body arriving too slowly' },
} as const satisfies ErrorTable;
