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
 */
import { childrenNamed, textOf, type XmlElement } from '../../../doc/element.js';
import { parseXml, XmlParseError } from '../../../doc/parse-xml.js';
import { jsonToElement, JsonInputError } from '../../../doc/json-input.js';
import { ceError } from '../../../errors/ce-error.js';
import { mediaType } from '../../../http/body.js';

export function parseIdList(body: Buffer, contentType: string | undefined, maxIds: number): string[] {
  const text = body.toString('utf8');
  if (text.trim() === '') return [];
  const mt = mediaType(contentType);
  let root: XmlElement;
  try {
    if (mt === 'application/json' || (mt === '' && text.trimStart().startsWith('{'))) root = jsonToElement('jobs', text);
    else if (mt === '' || mt === 'application/xml' || mt === 'text/xml') root = parseXml(body, { maxDepth: 8, maxElements: maxIds * 4 + 16 });
    else throw ceError('CE_ERR_JOB_BAD_ID_LIST_TYPE', `job id list must be application/xml or application/json, not ${mt.slice(0, 64)}`);
  } catch (e) {
    if (e instanceof XmlParseError || e instanceof JsonInputError) throw ceError('CE_ERR_JOB_BAD_ID_LIST', `malformed job id list: ${e.message}`);
    throw e;
  }
  const ids: string[] = [];
  for (const job of childrenNamed(root, 'job')) {
    for (const idEl of childrenNamed(job, 'id')) {
      const id = textOf(idEl).trim();
      if (id === '') continue;
      if (ids.length >= maxIds) throw ceError('CE_ERR_JOB_TOO_MANY_IDS', `at most ${maxIds} job ids per request`);
      ids.push(id);
    }
  }
  return ids;
}
