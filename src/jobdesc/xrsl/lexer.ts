/**
 * RSL lexical level, scanned in place over the text (no token array): whitespace and
 * comments, unquoted literals, "..." and '...' strings with doubled-quote escapes,
 * ^D...D user-delimited strings, $(NAME) variable references.
 *
 * Linear: every scan moves `pos` forward; quoted strings are cut with indexOf and
 * joined once, never built character by character.
 */
import { RslError } from './syntax.js';
import type { RslLiteral, RslVariable } from './syntax.js';

const SPECIAL = new Uint8Array(128);
for (const ch of '+&|()=<>!"\'^#$') SPECIAL[ch.charCodeAt(0)] = 1;
for (const c of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) SPECIAL[c] = 1;

/** Characters that end an unquoted literal (the RSL specials and whitespace). */
export function isSpecial(c: number): boolean {
  return c < 128 && SPECIAL[c] === 1;
}

export function isSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/** First character of `s` that may not appear in an attribute or variable name, if any. */
export function invalidNameChar(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) if (isSpecial(s.charCodeAt(i))) return s[i];
  return undefined;
}

export class RslLexer {
  pos = 0;
  readonly n: number;
  constructor(readonly text: string) {
    this.n = text.length;
  }

  peek(): number {
    return this.pos < this.n ? this.text.charCodeAt(this.pos) : -1;
  }

  /** Skips whitespace and `(* ... *)` comments (not nested: the first `*)` ends one). */
  skipSpace(): void {
    const t = this.text;
    for (;;) {
      while (this.pos < this.n && isSpace(t.charCodeAt(this.pos))) this.pos++;
      if (this.pos + 1 < this.n && t.charCodeAt(this.pos) === 0x28 && t.charCodeAt(this.pos + 1) === 0x2a) {
        const end = t.indexOf('*)', this.pos + 2);
        if (end < 0) throw new RslError('End of comment not found', this.pos, 'comment');
        this.pos = end + 2;
        continue;
      }
      return;
    }
  }

  /** At `(` that opens a comment rather than a group or sequence. */
  atComment(): boolean {
    return (
      this.pos + 1 < this.n && this.text.charCodeAt(this.pos) === 0x28 && this.text.charCodeAt(this.pos + 1) === 0x2a
    );
  }

  /** Whether the next character starts a string value (literal, quoted, user-quoted). */
  atString(): boolean {
    const c = this.peek();
    return c >= 0 && (!isSpecial(c) || c === 0x22 || c === 0x27 || c === 0x5e);
  }

  /** Whether the next character starts a value (a string or a variable reference). */
  atValue(): boolean {
    return this.atString() || this.peek() === 0x24;
  }

  /** Reads a literal, quoted or user-quoted string; undefined if none starts here. */
  readString(): RslLiteral | undefined {
    const c = this.peek();
    if (c === 0x22 || c === 0x27) return this.readQuoted(c);
    if (c === 0x5e) return this.readUserQuoted();
    if (c < 0 || isSpecial(c)) return undefined;
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    while (i < this.n && !isSpecial(t.charCodeAt(i))) i++;
    this.pos = i;
    return { kind: 'literal', value: t.slice(start, i), start, end: i };
  }

  private readQuoted(q: number): RslLiteral {
    const t = this.text;
    const start = this.pos;
    const qs = q === 0x22 ? '"' : "'";
    let seg = start + 1;
    let from = seg;
    let parts: string[] | undefined;
    for (;;) {
      const j = t.indexOf(qs, from);
      if (j < 0) {
        throw new RslError(
          q === 0x22 ? 'End of double quoted string not found' : 'End of single quoted string not found',
          start,
          'syntax',
        );
      }
      if (t.charCodeAt(j + 1) === q) {
        (parts ??= []).push(t.slice(seg, j + 1));
        seg = from = j + 2;
        continue;
      }
      this.pos = j + 1;
      let value: string;
      if (parts) {
        parts.push(t.slice(seg, j));
        value = parts.join('');
      } else value = t.slice(seg, j);
      return { kind: 'literal', value, start, end: j + 1 };
    }
  }

  private readUserQuoted(): RslLiteral {
    const t = this.text;
    const start = this.pos;
    if (start + 1 >= this.n) throw new RslError('End of user delimiter quoted string not found', start, 'syntax');
    const cp = t.codePointAt(start + 1) ?? 0;
    const d = String.fromCodePoint(cp);
    const dl = d.length;
    let seg = start + 1 + dl;
    let from = seg;
    let parts: string[] | undefined;
    for (;;) {
      const j = t.indexOf(d, from);
      if (j < 0) throw new RslError(`End of user delimiter (${d}) quoted string not found`, start, 'syntax');
      if (t.startsWith(d, j + dl)) {
        (parts ??= []).push(t.slice(seg, j + dl));
        seg = from = j + 2 * dl;
        continue;
      }
      this.pos = j + dl;
      let value: string;
      if (parts) {
        parts.push(t.slice(seg, j));
        value = parts.join('');
      } else value = t.slice(seg, j);
      return { kind: 'literal', value, start, end: j + dl };
    }
  }

  /** Reads `$( NAME )`; the lexer is at `$`. */
  readVariable(): RslVariable {
    const start = this.pos;
    this.pos++;
    this.skipSpace();
    if (this.peek() !== 0x28) throw new RslError("'(' expected", this.pos, 'syntax');
    this.pos++;
    this.skipSpace();
    const name = this.readString();
    if (!name || name.value === '') throw new RslError('Variable name expected', this.pos, 'syntax');
    const bad = invalidNameChar(name.value);
    if (bad !== undefined)
      throw new RslError(`Variable name (${name.value}) contains invalid character (${bad})`, name.start, 'syntax');
    this.skipSpace();
    if (this.peek() !== 0x29) throw new RslError("')' expected", this.pos, 'syntax');
    this.pos++;
    return { kind: 'variable', name: name.value, start, end: this.pos };
  }
}
