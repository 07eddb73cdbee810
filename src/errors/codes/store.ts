import type { ErrorTable } from './table.js';

/** The database (src/store). */
export const storeErrors = {
  CE_ERR_STORE_BAD_ROW: { status: 500, message: 'Stored job record does not match its table' },
} as const satisfies ErrorTable;
