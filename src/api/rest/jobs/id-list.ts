/**
 * The job id list of bulk actions (spec §2 "Shapes of bodies"), as clients send it:
 *  - XML `<jobs><job><id>A</id></job>...</jobs>` with Content-Type application/xml,
 *    text/xml or NONE (the ARC client sends none);
 *  - JSON `{"job":[{"id":"A"}]}` or `{"job":{"id":"A"}}` (pyarcrest, one job), with any
 *    parameters on the media type (`; charset=utf-8`);
 *  - the output of GET jobs posted back unchanged (extra elements such as `state` ignored);
 *  - an empty body is an empty list (clients post back an empty GET jobs answer).
 * Unlike A-REX (which silently answers 201 with no items), a malformed body is a 400
 * and an unknown media type a 415.
 *
 * Every entry gets an answer, in order: each `id` of each `job` is one item, and an
 * entry that is not a usable id (a JSON number, boolean, null, object; an empty or
 * blank id; XML markup inside `<id>`; a `job` without any `id`) is answered with its own
 * 400 item saying why, instead of vanishing from the answer (A-REX drops empty ids and
 * mangles non-string scalars; a client counting answers would be misled either way).
 *
 * JSON is read straight from the checked value (aCT posts thousands of ids every few
 * minutes), with the reading the document model gives (names compared by local name,
 * arrays as repeated siblings) plus the JSON type of each id value.
 */
import { childElements, childrenNamed, localPart, textOf, type XmlElement } from '../../../doc/element.js';
import { decodeUtf8Strict, defaultXmlLimits, parseXml, XmlParseError } from '../../../doc/parse-xml.js';
import { jsonList, jsonType, parseJsonObject, JsonInputError, type JsonObject } from '../../../doc/json-input.js';
import { ceError } from '../../../errors/ce-error.js';
import { mediaType } from '../../../http/body.js';
import { NO_ID as NO_ID_MARK, scanIdListXml } from './id-list-xml.js';
import { scanJsonIdList } from './json-id-scan.js';

/** An entry of the list that is not a job id, and why (the reason of its 400 item). */
export class InvalidIdEntry {
  constructor(readonly reason: string) {}
}

/** A job id (trimmed, never empty) or an entry answered with a 400. */
export type IdEntry = string | InvalidIdEntry;

const NO_ID = new InvalidIdEntry('Job entry has no id');
const EMPTY_ID = new InvalidIdEntry('Job id is empty');
const MARKUP_ID = new InvalidIdEntry('Job id must be text, not elements');
const notString = (type: string): InvalidIdEntry => new InvalidIdEntry(`Job id must be a string, not ${type}`);

export function parseIdList(body: Buffer, contentType: string | undefined, maxIds: number): IdEntry[] {
  const text = body.toString('utf8');
  if (text.trim() === '') return [];
  const mt = mediaType(contentType);
  const entries = new EntryCollector(maxIds);
  try {
    if (mt === 'application/json' || (mt === '' && text.trimStart().startsWith('{'))) {
      // The common shape is scanned (json-id-scan.ts); anything else takes the general reader.
      const scanned = scanJsonIdList(text);
      if (scanned !== undefined) for (const id of scanned) entries.text(id);
      else entriesFromJson(parseJsonObject(text), entries);
    } else if (mt === '' || mt === 'application/xml' || mt === 'text/xml') {
      const limits = { maxDepth: 8, maxElements: maxIds * 4 + 16 };
      // The plain shape every client sends is scanned directly (id-list-xml.ts); anything
      // else, and every error, comes from the general parser, as before.
      const plain =
        body.length <= defaultXmlLimits.maxBytes ? scanIdListXml(xmlText(body), limits.maxElements) : undefined;
      if (plain !== undefined) {
        for (const e of plain) {
          if (e === NO_ID_MARK) entries.add(NO_ID);
          else entries.text(e);
        }
      } else entriesFromXml(parseXml(body, limits), entries);
    } else
      throw ceError(
        'CE_ERR_JOB_BAD_ID_LIST_TYPE',
        `job id list must be application/xml or application/json, not ${mt.slice(0, 64)}`,
      );
  } catch (e) {
    if (e instanceof XmlParseError || e instanceof JsonInputError)
      throw ceError('CE_ERR_JOB_BAD_ID_LIST', `malformed job id list: ${e.message}`);
    throw e;
  }
  return entries.entries;
}

/**
 * Answer every entry in order: the ids go to `act` in one call (which answers one item
 * per id, in order), each invalid entry gets `invalid(reason)` in its place.
 */
export function answerEach<T>(
  entries: readonly IdEntry[],
  act: (ids: string[]) => T[],
  invalid: (reason: string) => T,
): T[] {
  const ids = entries.filter((e): e is string => typeof e === 'string');
  const answers = act(ids);
  if (ids.length === entries.length) return answers;
  let next = 0;
  return entries.map((e) => (typeof e === 'string' ? (answers[next++] as T) : invalid(e.reason)));
}

/** The document as the general parser decodes it: strict UTF-8 (its error when not), no byte order mark. */
function xmlText(body: Buffer): string {
  const t = decodeUtf8Strict(body);
  return t.charCodeAt(0) === 0xfeff ? t.slice(1) : t;
}

class EntryCollector {
  readonly entries: IdEntry[] = [];
  constructor(readonly max: number) {}

  add(e: IdEntry): void {
    // Invalid entries count too: each is an answer to build.
    if (this.entries.length >= this.max)
      throw ceError('CE_ERR_JOB_TOO_MANY_IDS', `at most ${this.max} job ids per request`);
    this.entries.push(e);
  }

  text(raw: string): void {
    const id = raw.trim();
    this.add(id === '' ? EMPTY_ID : id);
  }
}

function entriesFromXml(root: XmlElement, entries: EntryCollector): void {
  for (const job of childrenNamed(root, 'job')) {
    const ids = childrenNamed(job, 'id');
    if (ids.length === 0) entries.add(NO_ID);
    for (const idEl of ids) {
      if (childElements(idEl).length > 0) entries.add(MARKUP_ID);
      else entries.text(textOf(idEl));
    }
  }
}

function entriesFromJson(root: JsonObject, entries: EntryCollector): void {
  for (const k of Object.keys(root)) {
    if (localPart(k) !== 'job') continue;
    for (const job of jsonList(root[k])) {
      // A scalar or null `job` is an entry without `id` children.
      const members = job !== null && typeof job === 'object' ? (job as JsonObject) : {};
      let found = false;
      for (const k2 of Object.keys(members)) {
        if (localPart(k2) !== 'id') continue;
        for (const v of jsonList(members[k2])) {
          found = true;
          if (typeof v === 'string') entries.text(v);
          else entries.add(notString(jsonType(v)));
        }
      }
      if (!found) entries.add(NO_ID);
    }
  }
}
