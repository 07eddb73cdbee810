/**
 * Response format from the Accept header, as A-REX decides it (spec §1 rule 4;
 * A-REX §3.1): all Accept values joined, split on ',', each item cut
 * at ';' and trimmed; the FIRST item that is exactly one of the known types wins
 * (order, not q-values, decides, which is what clients rely on). Anything else (none,
 * `*\/*`) gives HTML.
 */
export type Format = 'json' | 'xml' | 'html';

export function negotiate(accept: string | string[] | undefined): Format {
  if (accept === undefined) return 'html';
  const joined = Array.isArray(accept) ? accept.join(',') : accept;
  for (const raw of joined.split(',')) {
    const semi = raw.indexOf(';');
    const t = (semi < 0 ? raw : raw.slice(0, semi)).trim().toLowerCase();
    if (t === 'application/json') return 'json';
    if (t === 'text/xml' || t === 'application/xml') return 'xml';
    if (t === 'text/html') return 'html';
  }
  return 'html';
}

export const contentTypeOf: Record<Format, string> = {
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html; charset=utf-8',
};
