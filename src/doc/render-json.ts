/**
 * JSON rendering with ARC 7's rules, which the JSON clients (pyarcrest, aCT, DIRAC)
 * depend on:
 *  - the root element's name does not appear; the top-level object is its content;
 *  - children are grouped by local name in order of first appearance; one child is a
 *    value, two or more an array;
 *  - `forcedArrays` names (direct children of the root only, as in ARC 7) are always
 *    arrays, `[]` when absent (appended at the end);
 *  - an element without element children is a leaf: its text as a JSON string, its
 *    attributes dropped; every scalar is a string (`"status-code":"201"`);
 *  - attributes of non-leaf elements go to `_attributes` (namespace declarations never do).
 * Unlike A-REX we emit correct UTF-8 instead of escaping every byte >= 0x80 (A-REX bug).
 */
import { localName, type XmlElement } from './element.js';

type Json = string | Json[] | { [k: string]: Json };

export function renderJson(root: XmlElement, forcedArrays: readonly string[] = []): string {
  const v = toJson(root, forcedArrays, true);
  if (typeof v === 'string') return v === '' ? '' : JSON.stringify(v);
  return JSON.stringify(v);
}

/** The JSON value of a non-root element (a member of its parent's object), as text. */
export function renderJsonMember(e: XmlElement): string {
  return JSON.stringify(toJson(e, [], false));
}

function hasElementChildren(e: XmlElement): boolean {
  for (const c of e.children) if (typeof c !== 'string') return true;
  return false;
}

function leafText(e: XmlElement): string {
  let s = '';
  for (const c of e.children) if (typeof c === 'string') s += c;
  return s;
}

function toJson(e: XmlElement, forced: readonly string[], isRoot: boolean): Json {
  const forcedHere = isRoot ? forced : [];
  if (!hasElementChildren(e) && forcedHere.length === 0) return leafText(e);
  const groups = new Map<string, Json[]>();
  for (const c of e.children) {
    if (typeof c === 'string') continue;
    const k = localName(c);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(toJson(c, forced, false));
  }
  const obj: { [k: string]: Json } = {};
  for (const [k, vals] of groups) obj[k] = vals.length === 1 && !forcedHere.includes(k) ? (vals[0] as Json) : vals;
  for (const k of forcedHere) if (!groups.has(k)) obj[k] = [];
  if (e.attrs) {
    const attrs: { [k: string]: string } = {};
    let any = false;
    for (const [k, v] of Object.entries(e.attrs)) {
      if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
      const i = k.indexOf(':');
      attrs[i < 0 ? k : k.slice(i + 1)] = v;
      any = true;
    }
    if (any) obj._attributes = attrs;
  }
  return obj;
}
