/**
 * Streamed rendering of the common big answer: a root whose children all have one name
 * (`<jobs><job>…</job>…</jobs>`), given as an iterable that is consumed lazily, so each
 * child may be built only when the one before it has been written (text-stream.ts).
 * The pieces join to exactly renderDoc(el(root, children), format, [childName]): in JSON
 * the child name is a forced array (`{"job":[]}` when there are none).
 */
import type { XmlElement } from './element.js';
import { htmlPieces } from './render-html.js';
import { renderJsonMember } from './render-json.js';
import { renderXml } from './render-xml.js';

export function* docPieces(
  root: string,
  childName: string,
  children: Iterable<XmlElement>,
  format: 'json' | 'xml' | 'html',
): Generator<string> {
  let n = 0;
  switch (format) {
    case 'json':
      yield `{${JSON.stringify(childName)}:[`;
      for (const c of children) yield (n++ > 0 ? ',' : '') + renderJsonMember(c);
      yield ']}';
      return;
    case 'xml':
      for (const c of children) yield (n++ > 0 ? '' : `<${root}>`) + renderXml(c);
      yield n > 0 ? `</${root}>` : `<${root}/>`;
      return;
    case 'html':
      yield* htmlPieces(root, children);
  }
}
