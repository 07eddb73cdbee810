/**
 * Response format from the Accept header, as A-REX decides it (spec §1 rule 4;
 * A-REX §3.1): all Accept values joined, split on ',', each item cut
 * at ';' and trimmed; the FIRST item that is exactly one of the known types wins
 * (order, not q-values, decides, which is what clients rely on). Anything else (none,
 * `*\/*`) gives HTML.
 */
export type Format = 'json' | 'xml' | 'html';

const FORMAT_OF: Readonly<Record<string, Format>> = {
  'application/json': 'json',
  'text/xml': 'xml',
  'application/xml': 'xml',
  'text/html': 'html',
};

/** The first Accept item that is one of `known` (a map from media type), else undefined. */
function firstKnown<T>(accept: string | string[] | undefined, known: Readonly<Record<string, T>>): T | undefined {
  if (accept === undefined) return undefined;
  const joined = Array.isArray(accept) ? accept.join(',') : accept;
  for (const raw of joined.split(',')) {
    const semi = raw.indexOf(';');
    const t = (semi < 0 ? raw : raw.slice(0, semi)).trim().toLowerCase();
    if (Object.hasOwn(known, t)) return known[t];
  }
  return undefined;
}

export function negotiate(accept: string | string[] | undefined): Format {
  return firstKnown(accept, FORMAT_OF) ?? 'html';
}

const STREAM_OR_FORMAT: Readonly<Record<string, boolean>> = {
  ...Object.fromEntries(Object.keys(FORMAT_OF).map((t) => [t, false])),
  'text/event-stream': true,
};

/**
 * Whether the client asks for a job event stream (a Ceres extension): `text/event-stream`
 * comes before any of the types above in Accept. Anything else is answered as `negotiate`
 * decides, exactly as before the extension existed.
 */
export function wantsEventStream(accept: string | string[] | undefined): boolean {
  return firstKnown(accept, STREAM_OR_FORMAT) ?? false;
}

export const contentTypeOf: Record<Format, string> = {
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html; charset=utf-8',
};
