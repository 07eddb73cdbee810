import type { ErrorTable } from './table.js';

/** Session directory and diagnose files. */
export const sessionErrors = {
} as const satisfies ErrorTable;
