/**
 * The web interface's static files: its style sheet, its small enhancement script and
 * htmx (from the npm package, never a CDN). Each is served under a name carrying a hash
 * of its content with a one-year immutable cache, so a new release is fetched at once and
 * an unchanged one never again; an ETag answers revalidations all the same.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { STYLE_CSS } from './style.js';
import { SITE_CSS } from './site-style.js';
import { WEB_JS } from './script.js';
import { WEB_LIVE_JS } from './live-script.js';

export interface Asset {
  readonly name: string;
  readonly type: string;
  readonly body: Buffer;
  readonly etag: string;
}

function asset(base: string, ext: string, type: string, text: string | Buffer): Asset {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `${base}.${hash}.${ext}`, type, body, etag: `"${hash}"` };
}

export interface Assets {
  readonly css: Asset;
  readonly js: Asset;
  /** The live updates over the job event stream (live-script.ts). */
  readonly live: Asset;
  readonly htmx: Asset;
  byName(name: string): Asset | undefined;
}

export function loadAssets(): Assets {
  const htmxFile = createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js');
  const all = {
    css: asset('ceres', 'css', 'text/css; charset=utf-8', STYLE_CSS + SITE_CSS),
    js: asset('ceres', 'js', 'text/javascript; charset=utf-8', WEB_JS),
    live: asset('ceres-live', 'js', 'text/javascript; charset=utf-8', WEB_LIVE_JS),
    htmx: asset('htmx', 'js', 'text/javascript; charset=utf-8', readFileSync(htmxFile)),
  };
  const index = new Map(Object.values(all).map((a) => [a.name, a]));
  return { ...all, byName: (n) => index.get(n) };
}
