/**
 * The headers every HTML answer carries (layout.ts, and the application's onSend hook in
 * routes.ts, registered at start while the pages load on first use). The
 * Content-Security-Policy allows only this origin's own files (no inline script or style,
 * no frames, no other origin), so even a rendering mistake cannot run foreign script.
 */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it Chromium sends `Origin: null` on same-origin form posts,
  // which the cross-site refusal (rightly) rejects.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};
