/**
 * Session paths as the client sends them: the raw (still percent-encoded) segments
 * after `jobs/<id>/session`, decoded ONE SEGMENT AT A TIME so an encoded '/' can never
 * create a new segment. A path that is not a plain sequence of file names is refused
 * with a 400 before anything touches the disk (docs/sessions.md "Path rules"):
 *
 *   - `.` and `..` (also as `%2e`, `%2E%2e`, ...): never a way up or sideways;
 *   - a '/' or '\' inside a segment (`%2f`, `%5c`) and a literal backslash;
 *   - NUL and every other control character (a newline would also forge lines of
 *     the job's `input_status` control file);
 *   - empty segments in the middle (`a//b`), malformed %-escapes, invalid UTF-8;
 *   - names longer than 255 bytes, more than 128 segments, the reserved upload prefix.
 *
 * One trailing '/' is allowed (`session/` or `session/dir/`) and only marks the request
 * as naming a directory. Symlinks are not a syntactic matter: src/fs/safe-fs.ts refuses them.
 */
import { ceError } from '../errors/ce-error.js';

/** Prefix of the temporary files plain PUTs write before renaming (hidden, not addressable). */
export const UPLOAD_TEMP_PREFIX = '.ceres-upload.';

export const MAX_SEGMENTS = 128;
export const MAX_NAME_BYTES = 255;

export interface SessionPath {
  /** Decoded segments, each a valid file name; empty for the session directory itself. */
  readonly segments: readonly string[];
  /** The request ended in '/', i.e. it names a directory. */
  readonly trailingSlash: boolean;
  /** Segments joined with '/', no leading slash ('' for the root). */
  readonly rel: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function parseSessionPath(raw: readonly string[]): SessionPath {
  const segs = [...raw];
  let trailingSlash = false;
  if (segs.length > 0 && segs[segs.length - 1] === '') {
    segs.pop();
    trailingSlash = true;
  }
  if (segs.length > MAX_SEGMENTS) throw bad(`at most ${MAX_SEGMENTS} path segments`);
  const out: string[] = [];
  for (const r of segs) out.push(decodeSegment(r));
  return { segments: out, trailingSlash, rel: out.join('/') };
}

function decodeSegment(raw: string): string {
  if (raw === '') throw bad('empty path segment');
  if (raw.includes('\\')) throw bad('backslashes are not allowed in paths');
  let name: string;
  if (raw.includes('%')) {
    if (/%(?![0-9a-fA-F]{2})/.test(raw)) throw bad('malformed percent-encoding');
    try {
      name = decodeURIComponent(raw);
    } catch {
      throw bad('percent-encoding is not valid UTF-8');
    }
  } else {
    name = raw;
  }
  if (name === '.' || name === '..') throw bad("'.' and '..' segments are not allowed");
  if (name.includes('/')) throw bad("an encoded '/' is not allowed inside a path segment");
  if (name.includes('\\')) throw bad('backslashes are not allowed in paths');
  if (CONTROL.test(name)) throw bad('control characters are not allowed in paths');
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw bad(`a file name is at most ${MAX_NAME_BYTES} bytes`);
  if (name.startsWith(UPLOAD_TEMP_PREFIX)) throw bad(`names starting with '${UPLOAD_TEMP_PREFIX}' are reserved`);
  return name;
}

/**
 * True when a request could name this directory entry (used to keep listings honest:
 * a listed file must be fetchable). Names the job made with a backslash or control
 * characters, or with bytes that are not UTF-8 (read back with U+FFFD), are not.
 */
export function isAddressableName(name: string): boolean {
  return !(
    name.includes('\\') ||
    CONTROL.test(name) ||
    name.includes('\uFFFD') ||
    name.startsWith(UPLOAD_TEMP_PREFIX) ||
    Buffer.byteLength(name) > MAX_NAME_BYTES
  );
}

function bad(detail: string) {
  return ceError('CE_ERR_SESSION_BAD_PATH', `Malformed session path: ${detail}`);
}
