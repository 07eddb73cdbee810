/**
 * Percent-encoding of session paths for hrefs (PROPFIND, HTML links).
 *
 * Only what RFC 3986 does not allow in a path segment is encoded: unreserved
 * characters, sub-delims, ':' and '@' stay as they are. Keeping the set of encoded
 * characters minimal matters for the ARC client: arcget never %-decodes the hrefs it
 * lists (A-REX §9.6), it appends them to the directory URL and encodes again when
 * it fetches, so a name survives its round trip exactly when encoding leaves it
 * unchanged. Names with a space, '%', '#', '?', non-ASCII and the like are encoded
 * (valid URIs for every WebDAV client), and arcget cannot fetch those names.
 */
const KEEP = /%(24|26|2B|2C|3B|3D|3A|40)/g;

export function encodeSegment(name: string): string {
  return encodeURIComponent(name).replace(KEEP, (m) => decodeURIComponent(m));
}

export function encodePath(segments: readonly string[]): string {
  return segments.map(encodeSegment).join('/');
}
