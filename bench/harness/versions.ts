/**
 * Interface version choice from `GET {service}/rest` (spec §4.1, §9).
 *
 * The answer is a version list: XML `<versions><version>1.0</version>...</versions>`
 * or JSON whose `version` key holds an array of strings or, as ARC 6 renders a single
 * element, one string (`{"version":"1.0"}`). The harness speaks 1.1 and 1.0 and takes
 * the highest version both sides know.
 */
import { BenchError } from './failures.js';

export const HARNESS_VERSIONS = ['1.1', '1.0'] as const;

const VERSION_RE = /^\d{1,4}\.\d{1,4}$/;

/**
 * Versions listed in a `/rest` answer, in the order given. Throws a `not-arc`
 * BenchError when the body is not a version list.
 */
export function parseVersionList(body: string, contentType: string | undefined): string[] {
  const text = body.trim();
  const mt = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let found: string[] | undefined;
  if (mt === 'application/json' || text.startsWith('{')) found = fromJson(text);
  else if (text.startsWith('<')) found = fromXml(text);
  if (found === undefined || found.length === 0) {
    throw new BenchError(
      'not-arc',
      `the answer to GET /rest is not an ARC REST version list (${describeBody(text, mt)})`,
    );
  }
  return found;
}

function fromJson(text: string): string[] | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null) return undefined;
  // Tolerate a wrapping object ({"versions":{"version":[...]}}) as some renderers add one.
  const rec = doc as Record<string, unknown>;
  const holder =
    typeof rec.versions === 'object' && rec.versions !== null ? (rec.versions as Record<string, unknown>) : rec;
  const v = holder.version;
  const list = typeof v === 'string' ? [v] : Array.isArray(v) ? v : undefined;
  if (list === undefined) return undefined;
  const out = list.filter((x): x is string => typeof x === 'string').map((x) => x.trim());
  return out.every((x) => VERSION_RE.test(x)) ? out : undefined;
}

function fromXml(text: string): string[] | undefined {
  if (!/<versions[\s>/]/.test(text)) return undefined;
  const out: string[] = [];
  for (const m of text.matchAll(/<version>\s*([^<]*?)\s*<\/version>/g)) {
    const v = m[1] ?? '';
    if (!VERSION_RE.test(v)) return undefined;
    out.push(v);
  }
  return out;
}

function describeBody(text: string, mt: string): string {
  if (text === '') return 'empty body';
  const head = text.slice(0, 60).replace(/\s+/g, ' ');
  return `${mt || 'no content-type'}: "${head}${text.length > 60 ? '...' : ''}"`;
}

function versionKey(v: string): number {
  const [maj, min] = v.split('.').map(Number);
  return (maj ?? 0) * 10_000 + (min ?? 0);
}

/** Highest version offered that the harness speaks; a `not-arc` BenchError if none. */
export function chooseVersion(offered: readonly string[], known: readonly string[] = HARNESS_VERSIONS): string {
  const usable = offered.filter((v) => known.includes(v));
  if (usable.length === 0) {
    throw new BenchError(
      'not-arc',
      `the endpoint offers interface versions ${offered.join(', ') || '(none)'}; this harness speaks ${known.join(', ')}`,
    );
  }
  return usable.reduce((best, v) => (versionKey(v) > versionKey(best) ? v : best));
}
