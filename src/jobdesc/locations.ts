/**
 * What a file source or target string means. Both languages use the same rule:
 * - empty, a path (no URL scheme), or a `file:` URL: the file stays with the client
 *   (input: the client uploads it into the session; output: kept for the client to
 *   download). DIRAC, for one, sends its local paths as xRSL input sources and uploads
 *   the files itself; A-REX treats them the same way.
 * - any other `scheme:...` that parses as a URL: the service transfers it.
 * - a `scheme:...` that does not parse: invalid.
 */
export type LocationKind = 'local' | 'url' | 'invalid';

function isAlpha(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
function isSchemeChar(c: number): boolean {
  return isAlpha(c) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e;
}

/** The URL scheme of `s` (lower-case), or undefined if `s` does not start with one. */
export function urlScheme(s: string): string | undefined {
  if (s.length === 0 || !isAlpha(s.charCodeAt(0))) return undefined;
  let i = 1;
  while (i < s.length && i < 64 && isSchemeChar(s.charCodeAt(i))) i++;
  // One letter before ':' is a drive letter, not a scheme; no client sends those anyway.
  if (s.charCodeAt(i) !== 0x3a || i < 2) return undefined;
  return s.slice(0, i).toLowerCase();
}

export function classifyLocation(s: string): LocationKind {
  if (s.length === 0) return 'local';
  const scheme = urlScheme(s);
  if (scheme === undefined || scheme === 'file') return 'local';
  return URL.canParse(s) ? 'url' : 'invalid';
}

/** A URL the service can use (not local); for replica locations, report and credential URLs. */
export function isRemoteUrl(s: string): boolean {
  return classifyLocation(s) === 'url';
}
