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
 * JSON is read straight from the checked value (aCT posts thousands of ids every few
 * minutes), with the same reading the document model gives: names compared by local
 * name, scalars as text, objects and null as empty text.
 */
import { childrenNamed, localPart, textOf } from '../../../doc/element.js';
import { parseXml, XmlParseError } from '../../../doc/parse-xml.js';
import { jsonList, jsonText, parseJsonObject, JsonInputError, type JsonObject } from '../../../doc/json-input.js';
import { ceError } from '../../../errors/ce-error.js';
import { mediaType } from '../../../http/body.js';

export function parseIdList(body: Buffer, contentType: string | undefined, maxIds: number): string[] {
  const text = body.toString('utf8');
  if (text.trim() === '') return [];
  const mt = mediaType(contentType);
  const ids = new IdCollector(maxIds);
  try {
    if (mt === 'application/json' || (mt === '' && text.trimStart().startsWith('{'))) idsFromJson(parseJsonObject(text), ids);
    else if (mt === '' || mt === 'application/xml' || mt === 'text/xml') {
      const root = parseXml(body, { maxDepth: 8, maxElements: maxIds * 4 + 16 });
      for (const job of childrenNamed(root, 'job')) for (const idEl of childrenNamed(job, 'id')) ids.add(textOf(idEl));
    } else throw ceError('CE_ERR_JOB_BAD_ID_LIST_TYPE', `job id list must be application/xml or application/json, not ${mt.slice(0, 64)}`);
  } catch (e) {
    if (e instanceof XmlParseError || e instanceof JsonInputError) throw ceError('CE_ERR_JOB_BAD_ID_LIST', `malformed job id list: ${e.message}`);
    throw e;
  }
  return ids.ids;
}

class IdCollector {
  readonly ids: string[] = [];
  constructor(readonly max: number) {}

  add(raw: string): void {
    const id = raw.trim();
    if (id === '') return;
    if (this.ids.length >= this.max) throw ceError('CE_ERR_JOB_TOO_MANY_IDS', `at most ${this.max} job ids per request`);
    this.ids.push(id);
  }
}

function idsFromJson(root: JsonObject, ids: IdCollector): void {
  for (const k of Object.keys(root)) {
    if (localPart(k) !== 'job') continue;
    for (const job of jsonList(root[k])) {
      // A scalar or null `job` has no `id` children.
      if (job === null || typeof job !== 'object') continue;
      const members = job as JsonObject;
      for (const k2 of Object.keys(members)) {
        if (localPart(k2) === 'id') for (const v of jsonList(members[k2])) ids.add(jsonText(v));
      }
    }
  }
}
