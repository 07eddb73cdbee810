/**
 * Compact XML serialisation (no declaration, no indentation), as A-REX renders its
 * REST answers; UTF-8 text stays as is. Empty elements are self-closed (`<jobs/>`).
 */
import type { XmlElement } from './element.js';

const TEXT_ESC = /[&<>\r]/g;
const ATTR_ESC = /[&<>"\r\n\t]/g;
const ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\r': '&#13;',
  '\n': '&#10;',
  '\t': '&#9;',
};

/** XML 1.0 forbids most C0 controls even as references; drop them rather than emit invalid XML. */
// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Anything either escape would touch; most texts (ids, states, numbers) have none. */
// eslint-disable-next-line no-control-regex
const NEEDS_WORK = /[&<>"\r\n\t\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export function escapeText(s: string): string {
  if (!NEEDS_WORK.test(s)) return s;
  return s.replace(INVALID_XML_CHARS, '').replace(TEXT_ESC, (c) => ESC[c] ?? c);
}
export function escapeAttr(s: string): string {
  if (!NEEDS_WORK.test(s)) return s;
  return s.replace(INVALID_XML_CHARS, '').replace(ATTR_ESC, (c) => ESC[c] ?? c);
}

export function renderXml(root: XmlElement): string {
  return write(root);
}

function write(e: XmlElement): string {
  let s = '<' + e.name;
  if (e.attrs) for (const [k, v] of Object.entries(e.attrs)) s += ' ' + k + '="' + escapeAttr(v) + '"';
  if (e.children.length === 0) return s + '/>';
  s += '>';
  for (const c of e.children) s += typeof c === 'string' ? escapeText(c) : write(c);
  return s + '</' + e.name + '>';
}
