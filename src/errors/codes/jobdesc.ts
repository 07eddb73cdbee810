import type { ErrorTable } from './table.js';

/** Job description parsing and acceptance checks. */
export const jobdescErrors = {
} as const satisfies ErrorTable;
