/**
 * JSON request bodies, read with the rules of the document model (src/doc/element.ts),
 * so a handler reads one shape whatever the client sent: object keys are child elements,
 * arrays repeated siblings, scalars text. `{"job":[{"id":"a"}]}` and `{"job":{"id":"a"}}`
 * both mean `<jobs><job><id>a</id></job></jobs>`. Numbers are the text JavaScript prints for
 * them (exact for integers up to 2^53; JSON.parse rounds beyond that: ids are strings anyway).
 *
 * `parseJsonObject` checks the rules (an object at the top; no array directly inside an
 * array; objects nested at most `maxDepth` deep); readers then take the fields they need
 * from the checked value with `jsonList`, without building elements, and can tell a
 * string from another scalar (`jsonType`), which the element model cannot.
 */
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

/** The JSON type of a value, as a reader names it in a message: `string`, `number`, `boolean`, `null`, `object`. */
export function jsonType(v: unknown): string {
  return v === null ? 'null' : typeof v;
}
