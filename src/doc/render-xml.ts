/**
 * Compact XML serialisation (no declaration, no indentation), as A-REX renders its
 * REST answers; UTF-8 text stays as is. Empty elements are self-closed (`<jobs/>`).
 */
import type { XmlElement } from './element.js';

const TEXT_ESC = /[&<>\r]/g;
const ATTR_ESC = /[&<>"\r\n\t]/g;
const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\r': '&#13;', '\n': '&#10;', '\t': '&#9;' };

/** XML 1.0 forbids most C0 controls even as references; drop them rather than emit invalid XML. */
// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function escapeText(s: string): string {
  return s.replace(INVALID_XML_CHARS, '').replace(TEXT_ESC, (c) => ESC[c] ?? c);
}
export function escapeAttr(s: string): string {
  return s.replace(INVALID_XML_CHARS, '').replace(ATTR_ESC, (c) => ESC[c] ?? c);
}

export function renderXml(root: XmlElement): string {
  const parts: string[] = [];
  write(root, parts);
  return parts.join('');
}

function write(e: XmlElement, out: string[]): void {
  out.push('<', e.name);
  if (e.attrs) for (const [k, v] of Object.entries(e.attrs)) out.push(' ', k, '="', escapeAttr(v), '"');
  if (e.children.length === 0) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const c of e.children) {
    if (typeof c === 'string') out.push(escapeText(c));
    else write(c, out);
  }
  out.push('</', e.name, '>');
}
