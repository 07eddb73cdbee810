/**
 * Directory listings of GET on a session directory, in the negotiated format.
 *
 * XML is A-REX's shape: `<list><file size="N">name</file>...<dir>name</dir></list>`.
 * JSON keeps ARC 7's shape that pyarcrest, aCT and DIRAC walk (`file` and `dir` are
 * always arrays of NAME STRINGS) and adds one key A-REX lacks, because its JSON loses
 * the sizes: `entry`, an array of `{"name","type","size","modified"}` objects (size for
 * files only, `modified` ISO 8601 UTC). Clients that do not know `entry` ignore it.
 * HTML is a page for browsers with a link per entry.
 *
 * Entries come sorted by name, files before directories (stable output); links and
 * other special files are not listed (safe-fs.ts).
 */
import { el, type XmlElement } from '../doc/element.js';
import { escapeHtml } from '../doc/render-html.js';
import type { DirEntry } from './safe-fs.js';
import { encodePath } from './href.js';

export const LISTING_FORCED_ARRAYS = ['file', 'dir', 'entry'] as const;

export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function ordered(entries: readonly DirEntry[]): DirEntry[] {
  return [...entries.filter((e) => e.kind === 'file'), ...entries.filter((e) => e.kind === 'dir')];
}

export function listingXml(entries: readonly DirEntry[]): XmlElement {
  return el(
    'list',
    ordered(entries).map((e) => (e.kind === 'file' ? el('file', e.name, { size: String(e.stat.size) }) : el('dir', e.name))),
  );
}

export function listingJson(entries: readonly DirEntry[]): XmlElement {
  const o = ordered(entries);
  return el('list', [
    o.filter((e) => e.kind === 'file').map((e) => el('file', e.name)),
    o.filter((e) => e.kind === 'dir').map((e) => el('dir', e.name)),
    o.map((e) =>
      el('entry', [el('name', e.name), el('type', e.kind), e.kind === 'file' && el('size', String(e.stat.size)), el('modified', isoSeconds(e.stat.mtimeMs))]),
    ),
  ]);
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}' +
  'td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}td.n{text-align:right}h1{font-size:1.2em}.empty{color:#888}';

/**
 * `base`: absolute path of the listed directory ending in '/', already encoded
 * (e.g. `/arex/rest/1.1/jobs/<id>/session/sub/`); `title`: the directory as shown.
 */
export function listingHtml(entries: readonly DirEntry[], base: string, title: string): string {
  const rows = ordered(entries)
    .map((e) => {
      const href = base + encodePath([e.name]) + (e.kind === 'dir' ? '/' : '');
      const label = escapeHtml(e.name) + (e.kind === 'dir' ? '/' : '');
      const size = e.kind === 'file' ? String(e.stat.size) : '';
      return `<tr><td><a href="${escapeHtml(href)}">${label}</a></td><td>${e.kind}</td><td class="n">${size}</td><td>${isoSeconds(e.stat.mtimeMs)}</td></tr>`;
    })
    .join('');
  const body = rows === '' ? '<p class="empty">(empty directory)</p>' : `<table><tr><th>name</th><th>type</th><th>size</th><th>modified</th></tr>${rows}</table>`;
  return (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>' +
    escapeHtml(title) +
    ' - Ceres</title><style>' +
    STYLE +
    '</style></head><body><h1>' +
    escapeHtml(title) +
    '</h1>' +
    body +
    '</body></html>'
  );
}
