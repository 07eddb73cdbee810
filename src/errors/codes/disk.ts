import type { ErrorTable } from './table.js';

/** Disk-space low-water marks (docs/operations.md, Disk space). */
export const diskErrors = {
  CE_ERR_DISK_LOW_SPACE: { status: 507, message: 'Insufficient Storage: free disk space is below the service limit' },
} as const satisfies ErrorTable;
