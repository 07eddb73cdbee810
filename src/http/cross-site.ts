/**
 * Cross-site request refusal. A browser that holds the user's certificate presents it
 * to this service whatever page makes the request, and job descriptions are recognised
 * by content, so without this check any web page could make the browser submit, kill
 * or upload (`<form enctype="text/plain">` with an xRSL body needs no script and no
 * CORS preflight). State-changing requests that a browser marks as coming from another
 * site are refused:
 *   - `Sec-Fetch-Site: cross-site` or `same-site` (a sibling host is another service);
 *   - an `Origin` that is not the origin the request addressed (nor the configured
 *     public URL's), including `Origin: null` (sandboxed frames, data: URLs, redirects).
 * Non-browser clients (the ARC client, pyarcrest, curl, HTCondor, DIRAC) send neither
 * header and are unaffected. Safe methods are never refused: they change nothing, and
 * a cross-site GET cannot read the answer without CORS, which Ceres never grants.
 */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PROPFIND']);

export interface CrossSiteInput {
  readonly method: string;
  readonly secFetchSite: string | string[] | undefined;
  readonly origin: string | string[] | undefined;
  /** Origins that count as this service (`https://host[:port]`): the addressed one, a configured one. */
  readonly ownOrigins: readonly string[];
}

/** Why the request is refused, or undefined when it may proceed. The reason names no header value. */
export function crossSiteRefusal(r: CrossSiteInput): string | undefined {
  if (SAFE_METHODS.has(r.method)) return undefined;
  const site = headerValue(r.secFetchSite)?.trim().toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return 'a browser sent this request from another web site';
  const origin = headerValue(r.origin);
  if (origin === undefined) return undefined;
  const o = normaliseOrigin(origin);
  if (o === undefined || !r.ownOrigins.some((own) => normaliseOrigin(own) === o))
    return 'the request comes from another web origin';
  return undefined;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  // A repeated header is ambiguous: take the first; a mismatch is refused anyway.
  return Array.isArray(v) ? v[0] : v;
}

/** `https://Host:443` → `https://host`; anything that is not an https origin → undefined. */
function normaliseOrigin(s: string): string | undefined {
  const m = /^(https?):\/\/([^/?#\s]+)$/i.exec(s.trim());
  if (!m) return undefined;
  const scheme = (m[1] as string).toLowerCase();
  let hostPort = (m[2] as string).toLowerCase();
  if (scheme === 'https' && hostPort.endsWith(':443')) hostPort = hostPort.slice(0, -4);
  if (scheme === 'http' && hostPort.endsWith(':80')) hostPort = hostPort.slice(0, -3);
  return `${scheme}://${hostPort}`;
}
