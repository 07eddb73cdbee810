/**
 * The job id list reader as it was before the XML fast path (src/api/rest/jobs/id-list-xml.ts):
 * every XML list went through the general parser (saxes, an element tree), then the
 * entries were read from the tree. Kept as the oracle the fast path is compared with in
 * test/api/id-list-xml.test.ts, and as the "before" of bench/info.bench.ts. Do not change
 * it to make a test pass: a difference is a change of the answer clients see.
 */
import { childElements, childrenNamed, localPart, textOf, type XmlElement } from '../../src/doc/element.js';
import { parseXml, XmlParseError } from '../../src/doc/parse-xml.js';
import { jsonList, jsonType, parseJsonObject, JsonInputError, type JsonObject } from '../../src/doc/json-input.js';
import { ceError } from '../../src/errors/ce-error.js';
import { mediaType } from '../../src/http/body.js';
import { InvalidIdEntry, type IdEntry } from '../../src/api/rest/jobs/id-list.js';

const NO_ID = new InvalidIdEntry('Job entry has no id');
const EMPTY_ID = new InvalidIdEntry('Job id is empty');
const MARKUP_ID = new InvalidIdEntry('Job id must be text, not elements');
const notString = (type: string): InvalidIdEntry => new InvalidIdEntry(`Job id must be a string, not ${type}`);

export function legacyParseIdList(body: Buffer, contentType: string | undefined, maxIds: number): IdEntry[] {
  const text = body.toString('utf8');
  if (text.trim() === '') return [];
  const mt = mediaType(contentType);
  const entries = new EntryCollector(maxIds);
  try {
    if (mt === 'application/json' || (mt === '' && text.trimStart().startsWith('{')))
      entriesFromJson(parseJsonObject(text), entries);
    else if (mt === '' || mt === 'application/xml' || mt === 'text/xml') {
      entriesFromXml(parseXml(body, { maxDepth: 8, maxElements: maxIds * 4 + 16 }), entries);
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
