import type { ErrorTable } from './table.js';

/** Authentication of the caller (TLS client certificate, RFC 3820 proxies, later bearer tokens). */
export const authErrors = {
  CE_ERR_AUTH_NO_CREDENTIALS: { status: 401, message: 'No client certificate presented' },
  CE_ERR_AUTH_CERT_INVALID: { status: 401, message: 'Client certificate refused' },
  CE_ERR_AUTH_FORBIDDEN: { status: 403, message: 'Operation is not allowed' },
  CE_ERR_AUTH_TOKEN_INVALID: { status: 401, message: 'Bearer token refused' },
  CE_ERR_AUTH_TOKEN_SCOPE: { status: 403, message: 'Token scopes do not allow this operation' },
  CE_ERR_AUTH_SUBJECT_AMBIGUOUS: {
    status: 401,
    message: 'Client certificate refused: its subject is ambiguous in one-line form',
  },
} as const satisfies ErrorTable;
