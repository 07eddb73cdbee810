import type { ErrorTable } from './table.js';

/** Credential delegations (X.509 proxies, JWT). */
export const delegationErrors = {
} as const satisfies ErrorTable;
