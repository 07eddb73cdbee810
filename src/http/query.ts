/**
 * Request-target parsing as the ARC clients need it:
 *  - absolute-form targets (`POST https://host:port/arex/rest/1.0/jobs?action=info`,
 *    what the ARC C++ client sends) are reduced to path + query;
 *  - the query starts at the first '?'; items split on '&'; `name=value` with both
 *    %-decoded (no '+' to space); the first occurrence of a repeated name wins.
 * The path is returned raw (still percent-encoded): each consumer decodes segment by
 * segment, so an encoded '/' can never create a new path segment.
 */
import { ceError } from '../errors/ce-error.js';

export interface Target {
  /** Raw path, percent-encoding intact. */
  readonly path: string;
  readonly query: ReadonlyMap<string, string>;
}

export function stripAbsoluteForm(url: string): string {
  if (url.startsWith('/')) return url;
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (!m) return url;
  const rest = url.slice(m[0].length);
  return rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
}

export function parseTarget(url: string): Target {
  const u = stripAbsoluteForm(url);
  const hash = u.indexOf('#');
  const noFrag = hash < 0 ? u : u.slice(0, hash);
  const q = noFrag.indexOf('?');
  const path = q < 0 ? noFrag : noFrag.slice(0, q);
  const query = new Map<string, string>();
  if (q >= 0) {
    for (const item of noFrag.slice(q + 1).split('&')) {
      if (item === '') continue;
      const eq = item.indexOf('=');
      const name = decodeComponent(eq < 0 ? item : item.slice(0, eq));
      const value = eq < 0 ? '' : decodeComponent(item.slice(eq + 1));
      if (!query.has(name)) query.set(name, value);
    }
  }
  return { path, query };
}

export function decodeComponent(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    throw ceError('CE_ERR_HTTP_BAD_QUERY', 'malformed percent-encoding in the request target');
  }
}
