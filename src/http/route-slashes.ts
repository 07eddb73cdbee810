/**
 * Doubled slashes in the route part of a request target (`/arex/rest/1.0//jobs`, from
 * clients that join an endpoint ending in `/` with a path starting with one) are
 * collapsed, as A-REX does. The route part is everything up to and including
 * `jobs/<id>/session`; what follows is a session file path, kept verbatim: there an
 * empty segment is refused (docs/sessions.md), never silently rewritten into another file.
 * Query and fragment are left alone.
 */
export function collapseRouteSlashes(target: string, prefixSegments: number): string {
  const cut = target.search(/[?#]/);
  const path = cut < 0 ? target : target.slice(0, cut);
  if (!path.startsWith('/') || !path.includes('//')) return target;
  const parts = path.split('/');
  const route: string[] = [];
  let i = 1; // parts[0] is the empty string before the leading '/'
  for (; i < parts.length; i++) {
    const seg = parts[i] as string;
    if (seg === '') continue;
    route.push(seg);
    // <prefix>/<version>/jobs/<id>/session: the session path starts after it.
    if (route.length === prefixSegments + 4 && route[prefixSegments + 1] === 'jobs' && seg === 'session') {
      i++;
      break;
    }
  }
  let p = `/${route.join('/')}`;
  if (i < parts.length) p += `/${parts.slice(i).join('/')}`;
  else if (route.length > 0 && path.endsWith('/')) p += '/';
  return cut < 0 ? p : p + target.slice(cut);
}
