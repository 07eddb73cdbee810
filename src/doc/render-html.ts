/**
 * HTML rendering for browsers (the negotiated format when the client asks for neither
 * JSON nor XML). Unlike A-REX's bare tables, this is a valid, escaped UTF-8 page. The
 * structure mirrors the document: each element is a table row of name and value.
 * Hooks for the later web interface: `links` turns values into anchors.
 */
import { localName, type XmlElement } from './element.js';

export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}' +
  'table{border-collapse:collapse;margin:.2em 0}td{border:1px solid #ccc;padding:.2em .5em;vertical-align:top}' +
  'td.k{background:#f4f4f4;font-weight:600;white-space:nowrap}h1{font-size:1.3em}.empty{color:#888}';

export function renderHtml(root: XmlElement, title?: string): string {
  return head(title ?? localName(root)) + body(root) + TAIL;
}

/**
 * renderHtml of a root named `name` whose children are `kids` (no text), piece by piece:
 * the streamed form for long lists (src/doc/render-stream.ts).
 */
export function* htmlPieces(name: string, kids: Iterable<XmlElement>): Generator<string> {
  yield head(name);
  let n = 0;
  for (const k of kids) yield (n++ === 0 ? '<table>' : '') + row(k);
  yield n === 0 ? EMPTY : '</table>';
  yield TAIL;
}

const TAIL = '</body></html>';
const EMPTY = '<span class="empty">(empty)</span>';

function head(name: string): string {
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>' +
    escapeHtml(name) +
    ' - Ceres</title><style>' +
    STYLE +
    '</style></head><body><h1>' +
    escapeHtml(name) +
    '</h1>'
  );
}

function row(k: XmlElement): string {
  return '<tr><td class="k">' + escapeHtml(localName(k)) + '</td><td>' + body(k) + '</td></tr>';
}

function body(e: XmlElement): string {
  const kids = e.children.filter((c): c is XmlElement => typeof c !== 'string');
  if (kids.length === 0) {
    const t = e.children
      .filter((c): c is string => typeof c === 'string')
      .join('')
      .trim();
    return t === '' ? EMPTY : escapeHtml(t);
  }
  let s = '<table>';
  for (const k of kids) s += row(k);
  return s + '</table>';
}
