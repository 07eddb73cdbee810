import type { ErrorTable } from './table.js';

/** Authorization groups and mapping to local accounts (src/authz/, docs/security.md). */
export const authzErrors = {
  CE_ERR_AUTHZ_NOT_ALLOWED: { status: 403, message: 'Not authorized: the caller is in none of the allowed groups' },
  CE_ERR_AUTHZ_NO_MAPPING: { status: 403, message: 'Not authorized: no local account for this caller' },
  CE_ERR_AUTHZ_POOL_EXHAUSTED: { status: 403, message: 'Not authorized: no free pool account for this caller' },
} as const satisfies ErrorTable;
