/**
 * Bulk answers as documents: `<jobs><job><status-code/><reason/><id/>...</job></jobs>`,
 * element order status-code, reason, id, then the action's field (A-REX §4.2).
 * In JSON `job` is always an array.
 *
 * `renderBulk` writes the common answers (status, kill, clean, restart, submission,
 * delegations) straight to JSON or XML text, without an element tree per item: a status
 * answer for 1,000 ids is 2,000 small objects instead of 6,000 elements. Its output is
 * byte for byte what renderDoc(bulkDocument(items)) gives (a property test holds it to
 * that); answers with info documents, and HTML, take the general path.
 */
import { el, type XmlElement } from '../../../doc/element.js';
import { docPieces } from '../../../doc/render-stream.js';
import { escapeText } from '../../../doc/render-xml.js';
import { renderDoc } from '../../../http/send.js';
import type { Format } from '../../../http/negotiate.js';
import type { BulkItem } from '../../../jobs/job-actions.js';
import type { ItemResult } from '../../../jobs/job-service.js';

export const JOBS_FORCED_ARRAYS = ['job'] as const;

type Item = BulkItem | ItemResult;

export function bulkDocument(items: readonly Item[]): XmlElement {
  return el('jobs', items.map(bulkItemElement));
}

function bulkItemElement(it: Item): XmlElement {
  const b = it as BulkItem;
  return el('job', [
    el('status-code', String(it.status)),
    el('reason', it.reason),
    it.id !== undefined && el('id', it.id),
    it.state !== undefined && el('state', it.state),
    b.infoDocument !== undefined && el('info_document', b.infoDocument ?? undefined),
    b.delegationIds?.map((d) => el('delegation_id', d)),
  ]);
}

export function renderBulk(items: readonly Item[], format: Format): string {
  if (format === 'html' || items.some((it) => (it as BulkItem).infoDocument !== undefined)) {
    return renderDoc(bulkDocument(items), format, JOBS_FORCED_ARRAYS);
  }
  return format === 'json' ? bulkJson(items) : bulkXml(items);
}

/**
 * The bulk answer as a stream of pieces, one item at a time, for answers too big to
 * hold (action=info: each item is an activity document). `items` is consumed lazily,
 * so an item is computed only when the one before it was sent (text-stream.ts).
 * Same bytes as renderDoc(bulkDocument(items), format, JOBS_FORCED_ARRAYS).
 */
export function bulkPieces(items: Iterable<Item>, format: Format): Generator<string> {
  return docPieces('jobs', 'job', mapLazy(items, bulkItemElement), format);
}

/** GET jobs as a stream of pieces; same bytes as renderDoc(listDocument(jobs), format, JOBS_FORCED_ARRAYS). */
export function listPieces(jobs: Iterable<ListedJob>, format: Format): Generator<string> {
  return docPieces('jobs', 'job', mapLazy(jobs, listItemElement), format);
}

function* mapLazy<T, U>(xs: Iterable<T>, f: (x: T) => U): Generator<U> {
  for (const x of xs) yield f(x);
}

interface JsonItem {
  'status-code': string;
  reason: string;
  id?: string;
  state?: string;
  delegation_id?: string | readonly string[];
}

function bulkJson(items: readonly Item[]): string {
  const job = new Array<JsonItem>(items.length);
  for (let i = 0; i < items.length; i++) {
    const it = items[i] as Item;
    const o: JsonItem = { 'status-code': String(it.status), reason: it.reason };
    if (it.id !== undefined) o.id = it.id;
    if (it.state !== undefined) o.state = it.state;
    const d = (it as BulkItem).delegationIds;
    // One child is a value, two or more an array, none no member (render-json rules).
    if (d !== undefined && d.length > 0) o.delegation_id = d.length === 1 ? d[0] : d;
    job[i] = o;
  }
  return JSON.stringify({ job });
}

function bulkXml(items: readonly Item[]): string {
  if (items.length === 0) return '<jobs/>';
  let s = '<jobs>';
  for (const it of items) {
    s += '<job><status-code>' + String(it.status) + '</status-code><reason>' + escapeText(it.reason) + '</reason>';
    if (it.id !== undefined) s += '<id>' + escapeText(it.id) + '</id>';
    if (it.state !== undefined) s += '<state>' + escapeText(it.state) + '</state>';
    const d = (it as BulkItem).delegationIds;
    if (d !== undefined) for (const x of d) s += '<delegation_id>' + escapeText(x) + '</delegation_id>';
    s += '</job>';
  }
  return s + '</jobs>';
}

interface ListedJob {
  readonly id: string;
  readonly state: string;
}

export function listDocument(jobs: readonly ListedJob[]): XmlElement {
  return el('jobs', jobs.map(listItemElement));
}

function listItemElement(j: ListedJob): XmlElement {
  return el('job', [el('id', j.id), el('state', j.state)]);
}
