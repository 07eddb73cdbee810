import type { ErrorTable } from './table.js';

/** Local accounts jobs run as (docs/security.md, "Jobs under local accounts"). */
export const accountErrors = {
  CE_ERR_ACCOUNT_UNKNOWN: { status: 500, message: 'Local account cannot be resolved' },
  CE_ERR_ACCOUNT_REFUSED: { status: 500, message: 'Local account may not run jobs' },
  CE_ERR_ACCOUNT_SWITCH_IMPOSSIBLE: { status: 500, message: 'The service cannot run jobs as another local account' },
} as const satisfies ErrorTable;
