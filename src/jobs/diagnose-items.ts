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
 *
 * The staging items follow A-REX's lifetime, so a client fetching every item finds what
 * A-REX serves (a WIPED job's are gone, as A-REX removes them from a deleted job):
 * - `input` and `output`: the staging lists (staging-lists.ts), from acceptance on;
 * - `input_status`: A-REX makes the file with an empty first line when it creates the
 *   job and appends `/<path>` per completed upload; the uploads append to the control
 *   file, and the empty first line is added here, so submission writes no file;
 * - `statistics`: the transfer records, empty (not absent) once staging has begun
 *   (PREPARING) even for a job that transferred nothing; kept with a wiped job.
 * `output_status` stays absent until an output was uploaded (404, as A-REX).
 */
import type { JobRecord } from '../store/job-record.js';
import { activityDocument, localFileText, statusFileText, type ActivityOptions } from './activity.js';
import type { DiagnoseName } from '../store/control-dir.js';
import { downloadedUrls, inputListText, outputListText } from './staging-lists.js';

export interface DiagnoseItemSources {
  /** The description text exactly as submitted. */
  readonly rawDescription: (id: string) => string | undefined;
  /** The service URL the `local` file names as head node. */
  readonly serviceUrl: () => string;
  readonly activity: ActivityOptions;
  /** A control file of the job; undefined when absent. */
  readonly controlFile: (id: string, name: 'input_status' | 'statistics') => Promise<string | undefined>;
}

/** A job whose staging began: it left ACCEPTED (a job killed there is staged out all the same). */
const stagingBegan = (j: JobRecord): boolean => j.state !== 'ACCEPTED';

export function diagnoseItemRenderer(
  s: DiagnoseItemSources,
): (j: JobRecord, name: DiagnoseName) => Promise<string | undefined> {
  return async (j, name) => {
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
        // A wiped job's staging items are read from what its minimal record kept.
        return j.state === 'DELETED' ? undefined : stagingItem(s, j, name);
    }
  };
}

async function stagingItem(s: DiagnoseItemSources, j: JobRecord, name: DiagnoseName): Promise<string | undefined> {
  switch (name) {
    case 'input': {
      const [uploads, statistics] = await Promise.all([
        s.controlFile(j.id, 'input_status'),
        s.controlFile(j.id, 'statistics'),
      ]);
      const uploaded = new Set((uploads ?? '').split('\n').filter(Boolean));
      return inputListText(j, { uploaded, downloaded: downloadedUrls(statistics ?? '') });
    }
    case 'output':
      return outputListText(j);
    case 'input_status':
      return `\n${(await s.controlFile(j.id, 'input_status')) ?? ''}`;
    case 'statistics':
      return stagingBegan(j) ? ((await s.controlFile(j.id, 'statistics')) ?? '') : undefined;
    default:
      return undefined;
  }
}
