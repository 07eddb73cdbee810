/**
 * The diagnose items (`jobs/<id>/diagnose/<name>`) rendered from the job record instead
 * of read from the control directory, so they are always current: the description as
 * submitted, the `status` and `local` files, the `xml` ComputingActivity, and the `failed`
 * file of an ended job. Any other name is undefined: the REST handler then reads the
 * control file.
 *
 * `failed` holds the failure reason, written by the engine when the job ends; but the end
 * is stored first and the file written after it, so a client that saw FAILED could ask for
 * it in between and get 404. For an ended job (FINISHED) the record's reason is what the
 * file holds, so it is rendered from there; a wiped job's file, kept with its minimal
 * record, is read as before.
 */
import type { JobRecord } from '../store/job-record.js';
import { activityDocument, localFileText, statusFileText, type ActivityOptions } from './activity.js';
import type { DiagnoseName } from '../store/control-dir.js';

export interface DiagnoseItemSources {
  /** The description text exactly as submitted. */
  readonly rawDescription: (id: string) => string | undefined;
  /** The service URL the `local` file names as head node. */
  readonly serviceUrl: () => string;
  readonly activity: ActivityOptions;
}

export function diagnoseItemRenderer(s: DiagnoseItemSources): (j: JobRecord, name: DiagnoseName) => string | undefined {
  return (j, name) => {
    switch (name) {
      case 'description':
        return s.rawDescription(j.id);
      case 'status':
        return statusFileText(j);
      case 'local':
        return localFileText(j, s.serviceUrl());
      case 'xml':
        return activityDocument(j, s.activity).xml();
      case 'failed':
        return j.state === 'FINISHED' && j.failureReason ? `${j.failureReason}\n` : undefined;
      default:
        return undefined;
    }
  };
}
