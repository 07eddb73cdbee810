import type { ErrorTable } from './table.js';

/** Job engine, state machine and batch backends. */
export const engineErrors = {
} as const satisfies ErrorTable;
