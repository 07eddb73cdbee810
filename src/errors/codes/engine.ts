import type { ErrorTable } from './table.js';

/** Job engine, state machine and batch backends. */
export const engineErrors = {
  CE_ERR_ENGINE_BAD_RECORD: { status: 500, message: 'Job record holds an invalid engine state' },
  CE_ERR_LRMS_BAD_SPEC: { status: 500, message: 'Batch job specification is invalid' },
  CE_ERR_LRMS_SUBMIT_FAILED: { status: 500, message: 'Job submission to the batch system failed' },
  CE_ERR_LRMS_CLOSED: { status: 503, message: 'Batch backend is shut down' },
  CE_ERR_LRMS_UNAVAILABLE: { status: 503, message: 'Batch backend is not available' },
  CE_ERR_LRMS_SUBMIT_WITHDRAWN: {
    status: 409,
    message: 'Job submission withdrawn before it reached the batch system (the job was killed)',
  },
} as const satisfies ErrorTable;
