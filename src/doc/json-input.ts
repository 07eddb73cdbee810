/**
 * JSON request bodies converted to the document model, so that handlers read one
 * shape whatever the client sent: object keys become child elements, arrays repeated
 * siblings, scalars text. `{"job":[{"id":"a"}]}` and `{"job":{"id":"a"}}` both become
 * `<jobs><job><id>a</id></job></jobs>`. Unlike A-REX, numbers keep all their digits.
 */
import { el, type XmlElement, type XmlNode } from './element.js';

export class JsonInputError extends Error {
  override readonly name = 'JsonInputError';
}

export function jsonToElement(rootName: string, text: string, maxDepth = 32): XmlElement {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new JsonInputError(`malformed JSON: ${e instanceof Error ? e.message : 'parse error'}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new JsonInputError('JSON body must be an object');
  return el(rootName, members(v as Record<string, unknown>, 1, maxDepth));
}

function members(o: Record<string, unknown>, depth: number, max: number): XmlNode[] {
  if (depth > max) throw new JsonInputError(`JSON nested deeper than ${max}`);
  const out: XmlNode[] = [];
  for (const [k, v] of Object.entries(o)) {
    const items = Array.isArray(v) ? v : [v];
    for (const item of items) out.push(value(k, item, depth + 1, max));
  }
  return out;
}

function value(name: string, v: unknown, depth: number, max: number): XmlElement {
  if (v === null || v === undefined) return el(name);
  if (typeof v === 'string') return el(name, v);
  if (typeof v === 'number' || typeof v === 'boolean') return el(name, String(v));
  if (Array.isArray(v)) throw new JsonInputError(`nested arrays are not allowed (under "${name}")`);
  return el(name, members(v as Record<string, unknown>, depth, max));
}
