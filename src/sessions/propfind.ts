/**
 * WebDAV PROPFIND answers (RFC 4918 §9.1) for session paths, as the ARC client's
 * arcget reads them (A-REX §9.6): a `207 Multi-Status` whose root is
 * `d:multistatus`, one `d:response` per resource with an absolute `d:href`
 * (directories end in '/'), and one `d:propstat` holding `d:prop` and
 * `d:status HTTP/1.1 200 OK`. `d:resourcetype` contains `d:collection` for
 * directories, which is how arcget tells them from files and recurses.
 *
 * Every answer carries the same live properties (what arcget asks for and more);
 * the request body is checked to be a PROPFIND document but its property selection
 * is not needed: clients read the properties they know and ignore the rest.
 *
 * The answer is written as a stream of pieces, one `d:response` each (text-stream.ts).
 */
import type { Stats } from 'node:fs';
import { el, localName, type XmlElement } from '../doc/element.js';
import { parseXml, XmlParseError } from '../doc/parse-xml.js';
import { renderXml } from '../doc/render-xml.js';
import { ceError } from '../errors/ce-error.js';
import type { DirTable } from './dir-table.js';
import { encodeSegment } from './href.js';
import { isoSeconds } from './listing.js';

/** `Depth: 0` or `1`; anything else (absent, `infinity`, garbage) is served as 1, never deeper. */
export function parseDepth(header: string | string[] | undefined): 0 | 1 {
  const v = Array.isArray(header) ? header[0] : header;
  return v !== undefined && v.trim() === '0' ? 0 : 1;
}

/** An empty body means allprop (RFC 4918 §9.1); a non-empty one must be a `DAV:propfind` document. */
export function checkPropfindBody(body: Buffer): void {
  if (body.toString('utf8').trim() === '') return;
  let root: XmlElement;
  try {
    root = parseXml(body, { maxDepth: 16, maxElements: 10_000 });
  } catch (e) {
    if (e instanceof XmlParseError)
      throw ceError('CE_ERR_SESSION_BAD_PROPFIND', `Malformed PROPFIND body: ${e.message.slice(0, 120)}`);
    throw e;
  }
  if (localName(root) !== 'propfind' || (root.ns !== undefined && root.ns !== 'DAV:')) {
    throw ceError('CE_ERR_SESSION_BAD_PROPFIND', 'Malformed PROPFIND body: the root element must be DAV: propfind');
  }
}

/** One resource's facts, as a PROPFIND answer shows them. */
export interface DavResource {
  /** Absolute URL, encoded; directories end in '/'. */
  readonly href: string;
  readonly displayName: string;
  readonly kind: 'file' | 'dir';
  readonly size: number;
  readonly mtimeMs: number;
  /** Birth time where known, else the modification time. */
  readonly createdMs: number;
}

export function davResourceOf(href: string, displayName: string, kind: 'file' | 'dir', s: Stats): DavResource {
  return {
    href,
    displayName,
    kind,
    size: s.size,
    mtimeMs: s.mtimeMs,
    createdMs: s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs,
  };
}

function response(r: DavResource): XmlElement {
  return el('d:response', [
    el('d:href', r.href),
    el('d:propstat', [
      el('d:prop', [
        el('d:displayname', r.displayName),
        el('d:resourcetype', r.kind === 'dir' ? el('d:collection') : undefined),
        r.kind === 'file' && el('d:getcontentlength', String(r.size)),
        r.kind === 'file' && el('d:getcontenttype', 'application/octet-stream'),
        el('d:getlastmodified', new Date(r.mtimeMs).toUTCString()),
        el('d:creationdate', isoSeconds(r.createdMs)),
      ]),
      el('d:status', 'HTTP/1.1 200 OK'),
    ]),
  ]);
}

/**
 * The 207 body: the resource itself, then (Depth 1 on a directory) each entry of
 * `children`, whose hrefs are `self.href` + the encoded name. Written one response at
 * a time (a directory may have hundreds of thousands of entries).
 */
export function* multistatus(self: DavResource, children?: DirTable): Generator<string> {
  yield '<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:">';
  yield renderXml(response(self));
  if (children) {
    const t = children;
    for (let i = 0; i < t.names.length; i++) {
      const name = t.names[i] as string;
      const kind = i < t.fileCount ? 'file' : 'dir';
      const href = `${self.href}${encodeSegment(name)}${kind === 'dir' ? '/' : ''}`;
      yield renderXml(
        response({
          href,
          displayName: name,
          kind,
          size: t.sizes[i] as number,
          mtimeMs: t.mtimeMs[i] as number,
          createdMs: t.createdMs[i] as number,
        }),
      );
    }
  }
  yield '</d:multistatus>';
}
