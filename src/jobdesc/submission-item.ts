/** One description of a submission body: parsed, or failed on its own. */
import type { ItemFailure } from './item-failure.js';
import type { JobDescription } from '../vocabulary/job-description.js';

export type SubmissionItem =
  | {
      readonly ok: true;
      /** The description's own text, to keep as the job's `description` (diagnose) file. */
      readonly text: string;
      readonly description: JobDescription;
    }
  | ItemFailure;
