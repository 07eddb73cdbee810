import type { ErrorTable } from './table.js';

/** Session directory and diagnose files. */
export const sessionErrors = {
  CE_ERR_SESSION_DIAGNOSE_UNKNOWN: { status: 404, message: 'Diagnostic item not found' },
  CE_ERR_SESSION_DIAGNOSE_ABSENT: { status: 404, message: 'Not found' },
  CE_ERR_SESSION_NOT_FOUND: { status: 404, message: 'Not found' },
  CE_ERR_SESSION_BAD_PATH: { status: 400, message: 'Malformed session path' },
  CE_ERR_SESSION_SYMLINK: { status: 403, message: 'Symbolic links in the session directory are not followed' },
  CE_ERR_SESSION_ROOT_DELETE: { status: 403, message: 'The session directory itself cannot be deleted' },
  CE_ERR_SESSION_IS_DIRECTORY: { status: 409, message: 'Path is a directory' },
  CE_ERR_SESSION_PARENT_NOT_DIRECTORY: { status: 409, message: 'A parent of the path is not a directory' },
  CE_ERR_SESSION_FILE_EXISTS: { status: 412, message: 'File exists' },
  CE_ERR_SESSION_BAD_CONTENT_RANGE: { status: 400, message: 'Malformed Content-Range' },
  CE_ERR_SESSION_BODY_LENGTH: { status: 400, message: 'Body length does not match Content-Range' },
  CE_ERR_SESSION_RANGE_NOT_SATISFIABLE: { status: 416, message: 'Range Not Satisfiable' },
  CE_ERR_SESSION_FILE_TOO_LARGE: { status: 413, message: 'File too large' },
  CE_ERR_SESSION_UPLOAD_FRAGMENTED: { status: 409, message: 'Upload too fragmented' },
  CE_ERR_SESSION_TREE_TOO_DEEP: { status: 409, message: 'Directory tree too deep' },
  CE_ERR_SESSION_BAD_PROPFIND: { status: 400, message: 'Malformed PROPFIND body' },
  CE_ERR_SESSION_NOT_REGULAR_FILE: { status: 409, message: 'Path is not a regular file' },
  CE_ERR_SESSION_PERMISSION_DENIED: { status: 403, message: 'Permission denied' },
  CE_ERR_SESSION_BUSY: { status: 409, message: 'Directory changed during the operation' },
  CE_ERR_SESSION_NO_SPACE: { status: 507, message: 'Insufficient Storage' },
  CE_ERR_SESSION_JOB_QUOTA: { status: 413, message: 'Upload quota of the job exceeded' },
  CE_ERR_SESSION_REPLACED: {
    status: 409,
    message: 'The session directory was replaced by the job; it is not accessed',
  },
  CE_ERR_SESSION_LISTING_TOO_LARGE: { status: 403, message: 'Directory has too many entries to list' },
  CE_ERR_SESSION_PATCH_RANGE: {
    status: 400,
    message: 'PATCH needs where its bytes go: Content-Range or offset (one of them)',
  },
} as const satisfies ErrorTable;
