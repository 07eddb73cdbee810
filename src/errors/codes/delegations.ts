import type { ErrorTable } from './table.js';

/** Credential delegations (X.509 proxies, JWT). */
export const delegationErrors = {
  CE_ERR_DELEG_NOT_FOUND: { status: 404, message: 'No such delegation' },
  CE_ERR_DELEG_TYPE_UNKNOWN: { status: 400, message: 'Unknown delegation type specified' },
  CE_ERR_DELEG_TYPE_NOT_IN_VERSION: { status: 400, message: 'Delegation type jwt needs interface version 1.1' },
  CE_ERR_DELEG_TYPE_MISMATCH: { status: 409, message: 'Delegation is of another type' },
  CE_ERR_DELEG_TOKEN_MISSING: { status: 400, message: 'Missing X-Delegation header in delegation request' },
  CE_ERR_DELEG_TOKEN_MALFORMED: { status: 400, message: 'Delegated token is not a JWT' },
  CE_ERR_DELEG_TOKEN_TOO_LARGE: { status: 431, message: 'Delegated token too large' },
  CE_ERR_DELEG_EMPTY_BODY: { status: 400, message: 'Missing payload' },
  CE_ERR_DELEG_NOT_PEM: { status: 400, message: 'No PEM certificate in the request body' },
  CE_ERR_DELEG_KEY_MISMATCH: { status: 400, message: 'Certificate does not match the delegation request' },
  CE_ERR_DELEG_CHAIN_REFUSED: { status: 400, message: 'Delegated certificate chain refused' },
  CE_ERR_DELEG_EXPIRED: { status: 400, message: 'Delegated credential expired or not yet valid' },
  CE_ERR_DELEG_WRONG_IDENTITY: { status: 403, message: 'Delegated credential belongs to another identity' },
  CE_ERR_DELEG_NO_CREDENTIAL: { status: 409, message: 'Delegation holds no credential yet' },
  CE_ERR_DELEG_IN_USE: { status: 409, message: 'Delegation is in use by active jobs' },
  CE_ERR_DELEG_TOO_MANY: { status: 403, message: 'Too many delegations for this user' },
  CE_ERR_DELEG_NOT_CALLERS_PROXY: {
    status: 400,
    message: "Delegated proxy alone is not issued by the caller's certificate",
  },
} as const satisfies ErrorTable;
