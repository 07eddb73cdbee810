/**
 * The fast path of XML job id lists. The ARC client sends every bulk action's ids as
 * `<jobs><job><id>A</id></job>...</jobs>` (no declaration, no namespace, no attributes),
 * and clients post back GET jobs answers (`<job><id/><state/></job>`). Reading that through
 * the general parser (src/doc/parse-xml.ts: saxes with positions and namespaces, then an
 * element tree) cost six to ten times what the same list costs as JSON.
 *
 * This scanner reads exactly that plain shape, in one pass over the decoded text: the
 * root `jobs`, then `job` elements and other text-only elements, each job's `id` and
 * other text-only children, whitespace between elements. Anything else (a declaration,
 * comment, CDATA, DOCTYPE, reference, attribute, prefix, CR, a character XML forbids,
 * `]]>`, deeper nesting, text between elements, more elements than the limit, a tag it
 * does not expect) makes it answer `undefined`, and the caller parses the document with
 * the general parser instead, which accepts it or gives its usual error. So the scanner
 * never decides that a document is bad, and what it accepts is well-formed XML whose
 * reading through the element tree is the same list (a property test compares both on
 * random documents, well-formed and not).
 */

/** An entry as read: the raw text of one `id` element, or NO_ID for a `job` without one. */
export type RawIdEntry = string | typeof NO_ID;
export const NO_ID: unique symbol = Symbol('job without id');

const LT = 60; // <
const GT = 62; // >
const SLASH = 47;
const AMP = 38;
const CR = 13;
const RSQB = 93; // ]

interface Tag {
  readonly close: boolean;
  readonly name: string;
  /** `<x/>` */
  readonly empty: boolean;
  /** Index after the tag's `>`. */
  readonly end: number;
}

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57) || c === 45 || c === 46;
}

/** A plain tag at `i` (which holds `<`): `<n>`, `</n>` or `<n/>` with an ASCII name and nothing else. */
function readTag(s: string, i: number): Tag | undefined {
  let j = i + 1;
  const close = s.charCodeAt(j) === SLASH;
  if (close) j++;
  const start = j;
  if (!isNameStart(s.charCodeAt(j))) return undefined;
  j++;
  while (isNameChar(s.charCodeAt(j))) j++;
  const name = s.slice(start, j);
  const empty = !close && s.charCodeAt(j) === SLASH;
  if (empty) j++;
  if (s.charCodeAt(j) !== GT) return undefined;
  return { close, name, empty, end: j + 1 };
}

/** Index after the XML whitespace at `i` (space, tab, LF, CR: whitespace between elements is ignored). */
function skipSpace(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === CR) i++;
    else return i;
  }
}

/**
 * The end (index of the next `<`) of plain character data starting at `i`, or -1: at a
 * reference, a CR (the parser normalises line ends), `]]>`, a character XML forbids, or
 * the end of the input.
 */
function textEnd(s: string, i: number): number {
  for (let j = i; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === LT) return j;
    if (c === AMP) return -1;
    if (c < 32) {
      // Tab and LF only: CR is normalised by the parser, the other C0 controls are not XML.
      if (c !== 9 && c !== 10) return -1;
    } else if (c === GT) {
      if (j >= i + 2 && s.charCodeAt(j - 1) === RSQB && s.charCodeAt(j - 2) === RSQB) return -1;
    } else if (c >= 0xd800) {
      if (c === 0xfffe || c === 0xffff) return -1;
      if (c <= 0xdbff) {
        const next = s.charCodeAt(j + 1);
        if (!(next >= 0xdc00 && next <= 0xdfff)) return -1;
        j++;
      } else if (c <= 0xdfff) return -1;
    }
  }
  return -1;
}

/** The text of a text-only element whose start tag is `t`, and the index after its end tag. */
function leaf(s: string, t: Tag): { text: string; end: number } | undefined {
  if (t.empty) return { text: '', end: t.end };
  const e = textEnd(s, t.end);
  if (e < 0) return undefined;
  const c = readTag(s, e);
  if (c === undefined || !c.close || c.name !== t.name) return undefined;
  return { text: s.slice(t.end, e), end: c.end };
}

/**
 * The entries of a plain id list, in order, or undefined when the document is anything
 * else (then the general parser decides). `maxElements` is the general parser's element
 * limit: a document with more elements is left to it.
 */
export function scanIdListXml(s: string, maxElements: number): RawIdEntry[] | undefined {
  let i = skipSpace(s, 0);
  if (s.charCodeAt(i) !== LT) return undefined;
  let t = readTag(s, i);
  if (t === undefined || t.close || t.name !== 'jobs') return undefined;
  const out: RawIdEntry[] = [];
  let elements = 1;
  i = t.end;
  if (!t.empty) {
    for (;;) {
      i = skipSpace(s, i);
      if (s.charCodeAt(i) !== LT) return undefined;
      t = readTag(s, i);
      if (t === undefined) return undefined;
      if (t.close) {
        if (t.name !== 'jobs') return undefined;
        i = t.end;
        break;
      }
      if (++elements > maxElements) return undefined;
      if (t.name !== 'job') {
        const other = leaf(s, t);
        if (other === undefined) return undefined;
        i = other.end;
        continue;
      }
      i = t.end;
      let ids = 0;
      if (!t.empty) {
        for (;;) {
          i = skipSpace(s, i);
          if (s.charCodeAt(i) !== LT) return undefined;
          const c = readTag(s, i);
          if (c === undefined) return undefined;
          if (c.close) {
            if (c.name !== 'job') return undefined;
            i = c.end;
            break;
          }
          if (++elements > maxElements) return undefined;
          const child = leaf(s, c);
          if (child === undefined) return undefined;
          if (c.name === 'id') {
            out.push(child.text);
            ids++;
          }
          i = child.end;
        }
      }
      if (ids === 0) out.push(NO_ID);
    }
  }
  return skipSpace(s, i) === s.length ? out : undefined;
}
