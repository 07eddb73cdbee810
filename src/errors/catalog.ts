/**
 * The error catalog: every stable code Ceres can answer with, its HTTP status and
 * default message. Areas keep their codes in src/errors/codes/<area>.ts; this module
 * is the single registry the error handler and docs/errors.md are checked against.
 * Codes are append-only and never reused.
 */
import { httpErrors } from './codes/http.js';
import { authErrors } from './codes/auth.js';
import { jobdescErrors } from './codes/jobdesc.js';
import { jobErrors } from './codes/jobs.js';
import { sessionErrors } from './codes/sessions.js';
import { delegationErrors } from './codes/delegations.js';
import { engineErrors } from './codes/engine.js';
import { stagingErrors } from './codes/staging.js';
import { storeErrors } from './codes/store.js';
import { authzErrors } from './codes/authz.js';
import { diskErrors } from './codes/disk.js';
import { accountErrors } from './codes/accounts.js';
import { webErrors } from './codes/web.js';

export const catalog = {
  ...httpErrors,
  ...authErrors,
  ...jobdescErrors,
  ...jobErrors,
  ...sessionErrors,
  ...delegationErrors,
  ...engineErrors,
  ...stagingErrors,
  ...storeErrors,
  ...authzErrors,
  ...diskErrors,
  ...accountErrors,
  ...webErrors,
} as const;

export type ErrorCode = keyof typeof catalog;
