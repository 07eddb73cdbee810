import type { ErrorTable } from './table.js';

/** Local accounts jobs run as (docs/security.md, "Jobs under local accounts"). */
export const accountErrors = {
  CE_ERR_ACCOUNT_UNKNOWN: { status: 500, message: 'Local account cannot be resolved' },
  CE_ERR_ACCOUNT_REFUSED: { status: 500, message: 'Local account may not run jobs' },
  CE_ERR_ACCOUNT_SWITCH_IMPOSSIBLE: { status: 500, message: 'The service cannot run jobs as another local account' },
  CE_ERR_ACCOUNT_CLEANUP_FAILED: {
    status: 500,
    message: 'A pool account could not be cleaned up before passing to another identity',
  },
} as const satisfies ErrorTable;
