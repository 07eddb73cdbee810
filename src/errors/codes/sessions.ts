import type { ErrorTable } from './table.js';

/** Session directory and diagnose files. */
export const sessionErrors = {
  CE_ERR_SESSION_DIAGNOSE_UNKNOWN: { status: 404, message: 'Diagnostic item not found' },
} as const satisfies ErrorTable;
