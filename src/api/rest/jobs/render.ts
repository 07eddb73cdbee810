/**
 * Bulk answers as documents: `<jobs><job><status-code/><reason/><id/>...</job></jobs>`,
 * element order status-code, reason, id, then the action's field (A-REX §4.2). A refused
 * submission item also has `code` after `reason` (its catalog code, as error documents do).
 * In JSON `job` is always an array.
 *
 * The JSON and XML answers are written straight to text, item by item, without an
 * element tree per item: a status answer for 1,000 ids is 1,000 short strings instead of
 * 6,000 elements, and an info item's activity document writes itself (src/doc/template.ts).
 * The output is byte for byte what renderDoc(bulkDocument(items)) gives (property tests
 * hold it to that); HTML takes the general path.
 */
import { el, localPart, type XmlElement } from '../../../doc/element.js';
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
  const code = (it as ItemResult).code;
  return el('job', [
    el('status-code', String(it.status)),
    el('reason', it.reason),
    code !== undefined && el('code', code),
    it.id !== undefined && el('id', it.id),
    it.state !== undefined && el('state', it.state),
    b.infoDocument !== undefined && el('info_document', b.infoDocument?.element()),
    b.delegationIds?.map((d) => el('delegation_id', d)),
  ]);
}

export function renderBulk(items: readonly Item[], format: Format): string {
  if (format === 'html') return renderDoc(bulkDocument(items), format, JOBS_FORCED_ARRAYS);
  let s = '';
  for (const p of bulkPieces(items, format)) s += p;
  return s;
}

/**
 * The bulk answer as a stream of pieces, one item at a time, for answers too big to
 * hold (action=info: each item is an activity document). `items` is consumed lazily,
 * so an item is computed only when the one before it was sent (text-stream.ts).
 * Same bytes as renderDoc(bulkDocument(items), format, JOBS_FORCED_ARRAYS).
 */
export function bulkPieces(items: Iterable<Item>, format: Format): Generator<string> {
  switch (format) {
    case 'json':
      return jsonPieces(items);
    case 'xml':
      return xmlPieces(items);
    case 'html':
      return docPieces('jobs', 'job', mapLazy(items, bulkItemElement), format);
  }
}

/** GET jobs as a stream of pieces; same bytes as renderDoc(listDocument(jobs), format, JOBS_FORCED_ARRAYS). */
export function listPieces(jobs: Iterable<ListedJob>, format: Format): Generator<string> {
  return docPieces('jobs', 'job', mapLazy(jobs, listItemElement), format);
}

function* mapLazy<T, U>(xs: Iterable<T>, f: (x: T) => U): Generator<U> {
  for (const x of xs) yield f(x);
}

function* jsonPieces(items: Iterable<Item>): Generator<string> {
  let sep = '{"job":[';
  for (const it of items) {
    yield sep + itemJson(it);
    sep = ',';
  }
  yield sep === ',' ? ']}' : '{"job":[]}';
}

function* xmlPieces(items: Iterable<Item>): Generator<string> {
  let first = true;
  for (const it of items) {
    yield first ? '<jobs>' + itemXml(it) : itemXml(it);
    first = false;
  }
  yield first ? '<jobs/>' : '</jobs>';
}

/** One item as renderJsonMember(bulkItemElement(it)): one child a value, two or more an array. */
function itemJson(it: Item): string {
  let s = '{"status-code":"' + String(it.status) + '","reason":' + JSON.stringify(it.reason);
  const code = (it as ItemResult).code;
  if (code !== undefined) s += ',"code":' + JSON.stringify(code);
  if (it.id !== undefined) s += ',"id":' + JSON.stringify(it.id);
  if (it.state !== undefined) s += ',"state":' + JSON.stringify(it.state);
  const b = it as BulkItem;
  if (b.infoDocument !== undefined) {
    const d = b.infoDocument;
    s +=
      d === null
        ? ',"info_document":""'
        : ',"info_document":{' + JSON.stringify(localPart(d.name)) + ':' + d.json() + '}';
  }
  const ds = b.delegationIds;
  if (ds !== undefined && ds.length > 0)
    s += ',"delegation_id":' + (ds.length === 1 ? JSON.stringify(ds[0]) : JSON.stringify(ds));
  return s + '}';
}

function itemXml(it: Item): string {
  let s = '<job><status-code>' + String(it.status) + '</status-code><reason>' + escapeText(it.reason) + '</reason>';
  const code = (it as ItemResult).code;
  if (code !== undefined) s += '<code>' + escapeText(code) + '</code>';
  if (it.id !== undefined) s += '<id>' + escapeText(it.id) + '</id>';
  if (it.state !== undefined) s += '<state>' + escapeText(it.state) + '</state>';
  const b = it as BulkItem;
  if (b.infoDocument !== undefined)
    s += b.infoDocument === null ? '<info_document/>' : '<info_document>' + b.infoDocument.xml() + '</info_document>';
  const ds = b.delegationIds;
  if (ds !== undefined) for (const x of ds) s += '<delegation_id>' + escapeText(x) + '</delegation_id>';
  return s + '</job>';
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
