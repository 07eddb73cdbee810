/**
 * A scanner for the one shape nearly every JSON id list has: `{"job":[{"id":"A"},...]}`
 * (what pyarcrest and aCT post, thousands of ids every few minutes), with any JSON
 * whitespace between the tokens. It reads the ids with `indexOf` instead of building an
 * object per job with JSON.parse and walking it twice (the checks of json-input.ts, then
 * the reader of id-list.ts), which was the largest step of an `action=status` call
 * (docs/performance.md, "status").
 *
 * It accepts only text that JSON.parse reads as exactly that shape and answers undefined
 * for anything else: another key or member, a single job object instead of an array, an
 * id with an escape (`\`) or a control character (invalid JSON, which the general path
 * refuses with its message). The caller then takes the general path, so the entries are
 * always those the general reader gives (a property test holds the two to each other).
 */

/** The raw id strings of a list of the common shape, in order, or undefined. */
export function scanJsonIdList(text: string): string[] | undefined {
  let i = ws(text, 0);
  if (text.charCodeAt(i) !== BRACE_OPEN || !text.startsWith('"job"', (i = ws(text, i + 1)))) return undefined;
  i = ws(text, i + 5);
  if (text.charCodeAt(i) !== COLON) return undefined;
  i = ws(text, i + 1);
  if (text.charCodeAt(i) !== BRACKET_OPEN) return undefined;
  i = ws(text, i + 1);
  const ids: string[] = [];
  if (text.charCodeAt(i) === BRACKET_CLOSE) i++;
  else
    for (;;) {
      if (text.charCodeAt(i) !== BRACE_OPEN || !text.startsWith('"id"', (i = ws(text, i + 1)))) return undefined;
      i = ws(text, i + 4);
      if (text.charCodeAt(i) !== COLON) return undefined;
      i = ws(text, i + 1);
      if (text.charCodeAt(i) !== QUOTE) return undefined;
      const end = text.indexOf('"', i + 1);
      if (end < 0) return undefined;
      for (let k = i + 1; k < end; k++) {
        const c = text.charCodeAt(k);
        if (c < 0x20 || c === BACKSLASH) return undefined;
      }
      ids.push(text.slice(i + 1, end));
      i = ws(text, end + 1);
      if (text.charCodeAt(i) !== BRACE_CLOSE) return undefined;
      i = ws(text, i + 1);
      const c = text.charCodeAt(i);
      if (c === BRACKET_CLOSE) {
        i++;
        break;
      }
      if (c !== COMMA) return undefined;
      i = ws(text, i + 1);
    }
  i = ws(text, i);
  if (text.charCodeAt(i) !== BRACE_CLOSE) return undefined;
  return ws(text, i + 1) === text.length ? ids : undefined;
}

const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const BRACKET_OPEN = 0x5b;
const BRACKET_CLOSE = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the first character at or after `i` that is not JSON whitespace (RFC 8259 §2). */
function ws(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}
