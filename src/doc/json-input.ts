/**
 * JSON request bodies converted to the document model, so that handlers read one
 * shape whatever the client sent: object keys become child elements, arrays repeated
 * siblings, scalars text. `{"job":[{"id":"a"}]}` and `{"job":{"id":"a"}}` both become
 * `<jobs><job><id>a</id></job></jobs>`. Numbers become the text JavaScript prints for them
 * (exact for integers up to 2^53; JSON.parse rounds beyond that: ids are strings anyway).
 *
 * The rules (an object at the top; no array directly inside an array; objects nested at
 * most `maxDepth` deep) are checked by `parseJsonObject`; hot paths that only pick a few
 * fields (the job id lists of bulk actions) read the checked value directly instead of
 * building elements, and must read it as `jsonToElement` would (`jsonText`, `jsonList`).
 */
import { el, type XmlElement, type XmlNode } from './element.js';

export class JsonInputError extends Error {
  override readonly name = 'JsonInputError';
}

export type JsonObject = { readonly [k: string]: unknown };

/** Parse and check a JSON body; the result obeys every rule of the document model. */
export function parseJsonObject(text: string, maxDepth = 32): JsonObject {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new JsonInputError(`malformed JSON: ${e instanceof Error ? e.message : 'parse error'}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new JsonInputError('JSON body must be an object');
  checkMembers(v as JsonObject, 1, maxDepth);
  return v as JsonObject;
}

export function jsonToElement(rootName: string, text: string, maxDepth = 32): XmlElement {
  return el(rootName, members(parseJsonObject(text, maxDepth)));
}

// Depth-first in key order, so the first rule broken is the one reported.
function checkMembers(o: JsonObject, depth: number, max: number): void {
  if (depth > max) throw new JsonInputError(`JSON nested deeper than ${max}`);
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (Array.isArray(v)) {
      for (const item of v) checkValue(k, item, depth + 1, max);
    } else checkValue(k, v, depth + 1, max);
  }
}

function checkValue(name: string, v: unknown, depth: number, max: number): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) throw new JsonInputError(`nested arrays are not allowed (under "${name}")`);
  checkMembers(v as JsonObject, depth, max);
}

/** A member's values as siblings: an array is its items, anything else one value. */
export function jsonList(v: unknown): readonly unknown[] {
  return Array.isArray(v) ? v : [v];
}

/** The text `textOf` would give for a value's element: scalars as text, objects and null ''. */
export function jsonText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}

function members(o: JsonObject): XmlNode[] {
  const out: XmlNode[] = [];
  for (const [k, v] of Object.entries(o)) for (const item of jsonList(v)) out.push(value(k, item));
  return out;
}

function value(name: string, v: unknown): XmlElement {
  if (v === null || v === undefined) return el(name);
  if (typeof v === 'string') return el(name, v);
  if (typeof v === 'number' || typeof v === 'boolean') return el(name, String(v));
  return el(name, members(v as JsonObject));
}
