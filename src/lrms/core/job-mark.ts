/**
 * The mark of a job attempt: a hash of its lrms directory, handed to the job wrapper
 * (CERES_JOB_MARK in every process's environment) so that the job's processes can be
 * found again. Derived, not stored, so a restart (or a clean) finds it again.
 */
import { createHash } from 'node:crypto';

export const markHash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 20);

/** The mark of the attempt in `lrmsDir`. */
export const jobMark = (lrmsDir: string): string => markHash(lrmsDir);
