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
  CE_ERR_WEB_ADMIN_READ_ONLY: {
    status: 403,
    message:
      "An administrator may look at another user's job, kill and clean it, but not change its files or restart it",
  },
  CE_ERR_WEB_FORM_INVALID: { status: 400, message: 'The upload form is malformed' },
  CE_ERR_WEB_FORM_TOO_LARGE: { status: 413, message: 'The upload form has too many or too large parts' },
  CE_ERR_WEB_NO_FILE: { status: 400, message: 'Choose a file to upload first' },
  CE_ERR_WEB_NO_DESCRIPTION: { status: 400, message: 'Paste a job description or choose a file that holds one' },
  CE_ERR_WEB_DESCRIPTION_TOO_LARGE: {
    status: 413,
    message: 'The job description is larger than the submission form takes',
  },
  CE_ERR_WEB_TWO_DESCRIPTIONS: {
    status: 400,
    message: 'Paste a job description or choose a file, not both',
  },
  CE_ERR_WEB_FILES_NEED_ONE_JOB: {
    status: 400,
    message:
      'Input files can be sent with one job description only: submit the descriptions one by one, or upload the files from each job page',
  },
  CE_ERR_WEB_VOMS_READ_ONLY: {
    status: 403,
    message:
      'Your browser was admitted through your VO membership, which lets it look but not act here: use a grid client with a VOMS proxy, or ask the site to allow it (web.vomsMayAct)',
  },
} as const satisfies ErrorTable;
