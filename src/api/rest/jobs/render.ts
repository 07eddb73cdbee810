/**
 * Bulk answers as documents: `<jobs><job><status-code/><reason/><id/>...</job></jobs>`,
 * element order status-code, reason, id, then the action's field (reference §4.2).
 * In JSON `job` is always an array.
 */
import { el, type XmlElement } from '../../../doc/element.js';
import type { BulkItem } from '../../../jobs/job-actions.js';
import type { ItemResult } from '../../../jobs/job-service.js';

export const JOBS_FORCED_ARRAYS = ['job'] as const;

export function bulkDocument(items: readonly (BulkItem | ItemResult)[]): XmlElement {
  return el(
    'jobs',
    items.map((it) => {
      const b = it as BulkItem;
      return el('job', [
        el('status-code', String(it.status)),
        el('reason', it.reason),
        it.id !== undefined && el('id', it.id),
        it.state !== undefined && el('state', it.state),
        b.infoDocument !== undefined && el('info_document', b.infoDocument ?? undefined),
        b.delegationIds?.map((d) => el('delegation_id', d)),
      ]);
    }),
  );
}

export function listDocument(jobs: readonly { id: string; state: string }[]): XmlElement {
  return el(
    'jobs',
    jobs.map((j) => el('job', [el('id', j.id), el('state', j.state)])),
  );
}
