/**
 * Source and target URLs as job descriptions carry them, turned into what the
 * transport requests. ARC URL syntax puts URL options after the host, separated by
 * ';' (`https://se.example.org:443;cache=no/data/f`); xRSL/ADL may also hand them over
 * separately. Options handled here: `cache` (yes|no|copy|renew), `checksum` (with a
 * value, `adler32:1a2b3c4d`, the checksum the file must have; a bare algorithm name is
 * accepted and ignored), `overwrite` (yes|no, uploads); others are kept but ignored
 * (e.g. `threads`).
 *
 * Schemes: http, https; WebDAV dav -> http and davs -> https (same protocol, the names
 * only tell the client to speak WebDAV); file only when the configuration allows it;
 * the schemes of gfal2's plugins (root, xroot, gsiftp, srm, s3, ...) as they are, for
 * gfal2 (whether its plugin is installed is the stager's question, schemes.ts).
 */
import { stagingError } from './staging-error.js';
import { redactUrl } from './redact.js';
import { GFAL2_PLUGIN_SCHEMES } from './schemes.js';

const GFAL2_SCHEMES = new Set(Object.values(GFAL2_PLUGIN_SCHEMES).flat());

/** `gfal2`: a grid protocol (root, gsiftp, srm, s3, ...) moved through gfal2 (schemes.ts). */
export type TransferScheme = 'http' | 'https' | 'file' | 'gfal2';

export interface TransferUrl {
  readonly scheme: TransferScheme;
  /** What is requested: options removed, dav(s) mapped to http(s). */
  readonly url: URL;
  /** Safe to show: the request URL with secrets redacted. */
  readonly display: string;
  /** True for dav:// and davs:// (parent collections may be created with MKCOL). */
  readonly webdav: boolean;
  readonly options: ReadonlyMap<string, string>;
}

const SCHEMES: Readonly<Record<string, { scheme: TransferScheme; webdav: boolean }>> = {
  http: { scheme: 'http', webdav: false },
  https: { scheme: 'https', webdav: false },
  dav: { scheme: 'http', webdav: true },
  davs: { scheme: 'https', webdav: true },
  file: { scheme: 'file', webdav: false },
};

export function parseTransferUrl(raw: string, extraOptions: Readonly<Record<string, string>> = {}): TransferUrl {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s.exec(raw.trim());
  if (m === null) throw stagingError('CE_ERR_STAGING_BAD_URL', 'Invalid URL (expected scheme://host/path)');
  const schemeName = (m[1] ?? '').toLowerCase();
  const kind = SCHEMES[schemeName] ?? (GFAL2_SCHEMES.has(schemeName) ? { scheme: 'gfal2', webdav: false } : undefined);
  if (kind === undefined)
    throw stagingError(
      'CE_ERR_STAGING_BAD_URL',
      `Unsupported protocol '${safeText(schemeName)}' (supported: http, https, dav, davs)`,
    );
  const [authority = '', ...optionParts] = (m[2] ?? '').split(';');
  if (kind.scheme !== 'file' && authority === '') throw stagingError('CE_ERR_STAGING_BAD_URL', 'Invalid URL: no host');
  const options = new Map<string, string>();
  for (const part of optionParts) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    options.set(
      (eq < 0 ? part : part.slice(0, eq)).toLowerCase(),
      eq < 0 ? '' : decodeURIComponentSafe(part.slice(eq + 1)),
    );
  }
  for (const [k, v] of Object.entries(extraOptions)) options.set(k.toLowerCase(), v);
  let url: URL;
  try {
    url = new URL(`${kind.scheme === 'gfal2' ? schemeName : kind.scheme}://${authority}${m[3] ?? ''}`);
  } catch {
    throw stagingError('CE_ERR_STAGING_BAD_URL', `Invalid URL '${redactUrl(raw)}'`);
  }
  url.hash = '';
  if (kind.scheme !== 'file' && url.hostname === '')
    throw stagingError('CE_ERR_STAGING_BAD_URL', `Invalid URL '${redactUrl(url)}': no host`);
  if (kind.scheme === 'file' && url.hostname !== '' && url.hostname !== 'localhost') {
    throw stagingError('CE_ERR_STAGING_BAD_URL', `Invalid URL '${redactUrl(url)}': file URLs must name a local path`);
  }
  return { scheme: kind.scheme, url, display: redactUrl(url), webdav: kind.webdav, options };
}

export type CacheMode = 'yes' | 'no' | 'copy' | 'renew';

/** The `cache` URL option (ARC's xRSL `cache` attribute adds it to every input). */
export function cacheMode(u: TransferUrl): CacheMode {
  const v = (u.options.get('cache') ?? 'yes').toLowerCase();
  if (v === 'no' || v === 'false' || v === '0') return 'no';
  if (v === 'copy' || v === 'renew') return v;
  return 'yes';
}

/** `overwrite=no` on an output target: refuse to replace an existing destination. */
export function overwriteAllowed(u: TransferUrl): boolean {
  const v = (u.options.get('overwrite') ?? 'yes').toLowerCase();
  return !(v === 'no' || v === 'false' || v === '0');
}

/**
 * The `checksum=type:value` option: the checksum the input must have, verified before
 * the job runs. A bare algorithm (`checksum=adler32`, ARC's way to name the type to
 * compute) carries nothing to verify: undefined.
 */
export function checksumOption(u: TransferUrl): string | undefined {
  const v = u.options.get('checksum');
  return v !== undefined && v.includes(':') ? v : undefined;
}

/** Quote user-provided text into an error message: printable, bounded. */
function safeText(s: string): string {
  const t = s.replace(/[^\x20-\x7e]/g, '?');
  return t.length > 200 ? `${t.slice(0, 200)}...` : t;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
