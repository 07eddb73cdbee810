import type { ErrorTable } from './table.js';

/** The web interface's own refusals (src/api/web). */
export const webErrors = {
  CE_ERR_WEB_TOKEN_MISSING: {
    status: 403,
    message: 'The form carried no request token: reload the page and try again',
  },
  CE_ERR_WEB_TOKEN_INVALID: {
    status: 403,
    message: 'The request token does not belong to this identity: reload the page and try again',
  },
  CE_ERR_WEB_TOKEN_EXPIRED: {
    status: 403,
    message: 'The page is too old (its request token expired): reload the page and try again',
  },
  CE_ERR_WEB_UPLOAD_TOO_LARGE: { status: 413, message: 'The file is larger than the web upload limit' },
} as const satisfies ErrorTable;
