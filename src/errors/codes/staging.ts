import type { ErrorTable } from './table.js';

/** Data staging (stage-in, stage-out, cache). */
export const stagingErrors = {
} as const satisfies ErrorTable;
