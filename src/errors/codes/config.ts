import type { ErrorTable } from './table.js';

/** Configuration (reported at start, not over HTTP). */
export const configErrors = {
} as const satisfies ErrorTable;
