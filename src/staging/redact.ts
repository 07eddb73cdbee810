/**
 * URLs shown to users and written to logs, statistics and error texts lose anything
 * that can act as a credential: a password in the user-info part and the values of
 * query parameters that look like tokens or signatures (pre-signed S3 URLs,
 * macaroons, SAS tokens). The request itself still uses the full URL.
 */
const SECRET_PARAM = /token|sig|signature|secret|passw|credential|auth|macaroon|key|session/i;

export function redactUrl(raw: string | URL): string {
  let u: URL;
  try {
    u = typeof raw === 'string' ? new URL(raw) : new URL(raw.href);
  } catch {
    return '(malformed URL)';
  }
  if (u.password !== '') u.password = '***';
  if (u.search !== '') {
    const kept: string[] = [];
    for (const [k, v] of u.searchParams)
      kept.push(`${encodeURIComponent(k)}=${SECRET_PARAM.test(k) ? '***' : encodeURIComponent(v)}`);
    u.search = kept.join('&');
  }
  return u.href;
}
