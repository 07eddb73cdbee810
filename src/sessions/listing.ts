/**
 * Directory listings of GET on a session directory, in the negotiated format, written
 * as a stream of pieces (src/doc/text-stream.ts): a directory may hold hundreds of
 * thousands of entries, and no answer is built whole in memory.
 *
 * XML is A-REX's shape: `<list><file size="N">name</file>...<dir>name</dir></list>`.
 * JSON keeps ARC 7's shape that pyarcrest, aCT and DIRAC walk (`file` and `dir` are
 * always arrays of NAME STRINGS) and adds one key A-REX lacks, because its JSON loses
 * the sizes: `entry`, an array of `{"name","type","size","modified"}` objects (size for
 * files only, `modified` ISO 8601 UTC). Clients that do not know `entry` ignore it.
 * HTML is a page for browsers with a link per entry.
 *
 * The bytes are exactly what the document model's renderers (render-xml.ts,
 * render-json.ts with `file`, `dir`, `entry` as forced arrays) give for the same
 * listing; the tests hold the pieces to that.
 *
 * Entries come sorted by name, files before directories (stable output); links and
 * other special files are not listed (dir-table.ts).
 */
import { escapeHtml } from '../doc/render-html.js';
import { escapeAttr, escapeText } from '../doc/render-xml.js';
import type { DirTable } from './dir-table.js';
import { encodePath } from './href.js';

export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const kindAt = (t: DirTable, i: number): 'file' | 'dir' => (i < t.fileCount ? 'file' : 'dir');

export function* listingXml(t: DirTable): Generator<string> {
  const n = t.names.length;
  if (n === 0) {
    yield '<list/>';
    return;
  }
  yield '<list>';
  for (let i = 0; i < n; i++) {
    const name = escapeText(t.names[i] as string);
    yield i < t.fileCount ? `<file size="${escapeAttr(String(t.sizes[i]))}">${name}</file>` : `<dir>${name}</dir>`;
  }
  yield '</list>';
}

/** A JSON array of the pieces, written one member at a time. */
function* jsonArray(from: number, to: number, member: (i: number) => string): Generator<string> {
  yield '[';
  for (let i = from; i < to; i++) yield (i > from ? ',' : '') + member(i);
  yield ']';
}

export function* listingJson(t: DirTable): Generator<string> {
  const n = t.names.length;
  const name = (i: number) => JSON.stringify(t.names[i]);
  const groups: [string, () => Generator<string>][] = [
    ['file', () => jsonArray(0, t.fileCount, name)],
    ['dir', () => jsonArray(t.fileCount, n, name)],
    [
      'entry',
      () =>
        jsonArray(0, n, (i) => {
          const size = i < t.fileCount ? `,"size":"${t.sizes[i]}"` : '';
          return `{"name":${name(i)},"type":"${kindAt(t, i)}"${size},"modified":"${isoSeconds(t.mtimeMs[i] as number)}"}`;
        }),
    ],
  ];
  // render-json's order: groups in order of first appearance, then absent forced arrays.
  const present = [t.fileCount > 0, n > t.fileCount, n > 0];
  const order = [...groups.filter((_, k) => present[k]), ...groups.filter((_, k) => !present[k])];
  let first = true;
  for (const [key, members] of order) {
    yield `${first ? '{' : ','}"${key}":`;
    first = false;
    yield* members();
  }
  yield '}';
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}' +
  'td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}td.n{text-align:right}h1{font-size:1.2em}.empty{color:#888}';

/**
 * `base`: absolute path of the listed directory ending in '/', already encoded
 * (e.g. `/arex/rest/1.1/jobs/<id>/session/sub/`); `title`: the directory as shown.
 */
export function* listingHtml(t: DirTable, base: string, title: string): Generator<string> {
  const n = t.names.length;
  const head = escapeHtml(title);
  yield `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${head} - Ceres</title><style>${STYLE}</style></head><body><h1>${head}</h1>`;
  if (n === 0) yield '<p class="empty">(empty directory)</p>';
  else {
    yield '<table><tr><th>name</th><th>type</th><th>size</th><th>modified</th></tr>';
    for (let i = 0; i < n; i++) {
      const e = t.names[i] as string;
      const kind = kindAt(t, i);
      const slash = kind === 'dir' ? '/' : '';
      const href = base + encodePath([e]) + slash;
      const size = kind === 'file' ? String(t.sizes[i]) : '';
      yield `<tr><td><a href="${escapeHtml(href)}">${escapeHtml(e)}${slash}</a></td><td>${kind}</td><td class="n">${size}</td><td>${isoSeconds(t.mtimeMs[i] as number)}</td></tr>`;
    }
    yield '</table>';
  }
  yield '</body></html>';
}
