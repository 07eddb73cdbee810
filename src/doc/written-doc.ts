/**
 * A document that writes itself. Hot documents (the GLUE2 ComputingActivity of every
 * `action=info` item) are rendered by a writer compiled once from their template,
 * straight to JSON or XML text, without an element tree per document; the tree is made
 * only when something needs it (the HTML rendering, the diagnose `xml` item's tests).
 *
 * The contract, held by property tests against the generic renderers:
 *   json() === renderJsonMember(element())   (the element's JSON value, its name left out)
 *   xml()  === renderXml(element())
 */
import type { XmlElement } from './element.js';
import { renderJsonMember } from './render-json.js';
import { renderXml } from './render-xml.js';

export interface WrittenDoc {
  /** The root element's qualified name (the JSON member name of the value json() gives). */
  readonly name: string;
  element(): XmlElement;
  json(): string;
  xml(): string;
}

/** A tree as a WrittenDoc, rendered by the generic renderers (for documents that are not hot). */
export function writtenDoc(e: XmlElement): WrittenDoc {
  return { name: e.name, element: () => e, json: () => renderJsonMember(e), xml: () => renderXml(e) };
}
