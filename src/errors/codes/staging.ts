import type { ErrorTable } from './table.js';

/** Data staging (stage-in, stage-out, cache). */
export const stagingErrors = {
  CE_ERR_STAGING_BAD_URL: { status: 400, message: 'Unsupported or malformed URL for data staging' },
  CE_ERR_STAGING_FILE_URL_DENIED: { status: 403, message: 'file URLs are not allowed for data staging' },
  CE_ERR_STAGING_BAD_NAME: { status: 400, message: 'File name is not a valid path inside the session directory' },
  CE_ERR_STAGING_UNSAFE_PATH: { status: 400, message: 'Session path crosses a symbolic link or is not a regular file' },
  CE_ERR_STAGING_REMOTE_STATUS: { status: 502, message: 'Remote server refused the transfer' },
  CE_ERR_STAGING_NETWORK: { status: 502, message: 'Network failure during transfer' },
  CE_ERR_STAGING_TIMEOUT: { status: 504, message: 'Transfer timed out' },
  CE_ERR_STAGING_TLS: { status: 502, message: 'TLS failure during transfer' },
  CE_ERR_STAGING_REDIRECT: { status: 502, message: 'Redirect not followed' },
  CE_ERR_STAGING_SIZE_MISMATCH: { status: 502, message: 'File size does not match the expected size' },
  CE_ERR_STAGING_CHECKSUM_MISMATCH: { status: 502, message: 'File checksum does not match the expected checksum' },
  CE_ERR_STAGING_BAD_CHECKSUM: { status: 400, message: 'Unsupported or malformed checksum' },
  CE_ERR_STAGING_NO_CREDENTIAL: { status: 403, message: 'Delegated credential not available for the transfer' },
  CE_ERR_STAGING_ACCESS_DENIED: { status: 403, message: 'Access to the source denied for this user' },
  CE_ERR_STAGING_USER_FILE_TIMEOUT: {
    status: 504,
    message: 'Timeout waiting for an input file uploaded by the client',
  },
  CE_ERR_STAGING_USER_FILE_INVALID: { status: 400, message: 'Input file uploaded by the client is not acceptable' },
  CE_ERR_STAGING_LOCAL_IO: { status: 500, message: 'Local file system error during data staging' },
  CE_ERR_STAGING_CANCELLED: { status: 409, message: 'Data staging cancelled' },
  CE_ERR_STAGING_SKIPPED: { status: 409, message: 'Transfer not attempted because another file failed' },
} as const satisfies ErrorTable;
