import type { ErrorTable } from './table.js';

/** Job submission and bulk job actions. */
export const jobErrors = {
} as const satisfies ErrorTable;
