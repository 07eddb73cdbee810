/**
 * RSL syntax: recursive descent over the lexer, building the tree of syntax.ts.
 *
 *   request    := '+' group+ (top level only) | ('&' | '|') group+ | relation
 *   group      := '(' request ')'
 *   relation   := name relop value-list
 *   value-list := (value | '(' value-list ')')*
 *   value      := string | $(NAME) | value '#' value | value value   (touching)
 *
 * Recursion depth is bounded by `maxDepth` (groups and sequences together), so hostile
 * nesting is an error, never a stack overflow. Work is linear in the input.
 */
import { RslLexer, invalidNameChar } from './lexer.js';
import { RslError } from './syntax.js';
import type {
  RelOp,
  RslBoolean,
  RslConcat,
  RslLiteral,
  RslNode,
  RslRelation,
  RslSequence,
  RslValue,
  RslVariable,
} from './syntax.js';

export interface RslParseOptions {
  maxDepth: number;
}

/** Parses a whole RSL text; throws RslError (kind decides claiming, see syntax.ts). */
export function parseRsl(text: string, opts: RslParseOptions): RslNode {
  return new RslParser(text, opts.maxDepth).document();
}

class RslParser {
  private readonly lx: RslLexer;
  /** Relations parsed so far; a syntax error after the first one is "claimed". */
  private relations = 0;

  constructor(
    text: string,
    private readonly maxDepth: number,
  ) {
    this.lx = new RslLexer(text);
  }

  document(): RslNode {
    try {
      this.lx.skipSpace();
      const root = this.request(0);
      this.lx.skipSpace();
      if (this.lx.pos < this.lx.n) throw new RslError('Junk at end of RSL', this.lx.pos, 'syntax');
      return root;
    } catch (e) {
      // Claiming follows A-REX: syntax errors before any complete relation are not ours.
      if (e instanceof RslError && e.kind === 'syntax') e.claimed = this.relations > 0;
      throw e;
    }
  }

  private fail(message: string, at = this.lx.pos): never {
    throw new RslError(message, at, 'syntax');
  }

  private request(depth: number): RslNode {
    const c = this.lx.peek();
    if (c === 0x2b /* + */ || c === 0x26 /* & */ || c === 0x7c /* | */) {
      if (c === 0x2b && depth > 0) this.fail('Multi-request operator only allowed at top level');
      const start = this.lx.pos;
      this.lx.pos++;
      const operands = this.groups(depth);
      const op = c === 0x2b ? '+' : c === 0x26 ? '&' : '|';
      const node: RslBoolean = { kind: 'boolean', op, operands, start, end: this.lx.pos };
      return node;
    }
    return this.relation(depth);
  }

  /** One or more `( request )`; leaves the lexer after the last `)`. */
  private groups(depth: number): RslNode[] {
    const out: RslNode[] = [];
    this.lx.skipSpace();
    if (this.lx.peek() !== 0x28) this.fail("'(' expected");
    while (this.lx.peek() === 0x28) {
      if (depth + 1 > this.maxDepth) this.fail(`Nesting deeper than ${this.maxDepth} levels`);
      this.lx.pos++;
      this.lx.skipSpace();
      out.push(this.request(depth + 1));
      this.lx.skipSpace();
      if (this.lx.peek() !== 0x29) this.fail("')' expected");
      this.lx.pos++;
      const save = this.lx.pos;
      this.lx.skipSpace();
      if (this.lx.peek() !== 0x28) {
        // Leave trailing space to the caller so `end` offsets stay tight.
        this.lx.pos = save;
        break;
      }
    }
    return out;
  }

  private relation(depth: number): RslRelation {
    const start = this.lx.pos;
    const name = this.lx.readString();
    if (!name || name.value === '') this.fail('Attribute name expected');
    const bad = invalidNameChar(name.value);
    if (bad !== undefined) this.fail(`Attribute name (${name.value}) contains invalid character (${bad})`, name.start);
    this.lx.skipSpace();
    const op = this.relop();
    const values = this.valueList(depth);
    this.relations++;
    return { kind: 'relation', attribute: normaliseAttribute(name.value), op, values, start, end: this.lx.pos };
  }

  private relop(): RelOp {
    const t = this.lx.text;
    const p = this.lx.pos;
    const c = this.lx.peek();
    const eq = t.charCodeAt(p + 1) === 0x3d;
    let op: RelOp;
    if (c === 0x3d) op = '=';
    else if (c === 0x21 && eq) op = '!=';
    else if (c === 0x3c) op = eq ? '<=' : '<';
    else if (c === 0x3e) op = eq ? '>=' : '>';
    else return this.fail('Relation operator expected');
    this.lx.pos += op.length;
    return op;
  }

  /** Values up to (not including) the closing `)` or anything that cannot start a value. */
  private valueList(depth: number): RslValue[] {
    const items: RslValue[] = [];
    for (;;) {
      this.lx.skipSpace();
      const c = this.lx.peek();
      if (c === 0x23 /* # */) {
        const hashAt = this.lx.pos;
        const left = items.pop();
        if (left === undefined) this.fail('No left operand for concatenation operator');
        this.lx.pos++;
        this.lx.skipSpace();
        const right = this.item(depth);
        if (right === undefined) this.fail('No right operand for concatenation operator', hashAt);
        items.push(concat(left, right));
        continue;
      }
      const v = this.item(depth);
      if (v === undefined) return items;
      items.push(v);
    }
  }

  /** One value or sequence, with touching values concatenated; undefined if none here. */
  private item(depth: number): RslValue | undefined {
    const c = this.lx.peek();
    if (c === 0x28 /* ( */ && !this.lx.atComment()) {
      if (depth + 1 > this.maxDepth) this.fail(`Nesting deeper than ${this.maxDepth} levels`);
      const start = this.lx.pos;
      this.lx.pos++;
      const inner = this.valueList(depth + 1);
      if (this.lx.peek() !== 0x29) this.fail("')' expected");
      this.lx.pos++;
      const seq: RslSequence = { kind: 'sequence', items: inner, start, end: this.lx.pos };
      return seq;
    }
    let v: RslValue | undefined = this.single();
    if (v === undefined) return undefined;
    // Implicit concatenation: values that touch (no space or comment between) join.
    while (this.lx.atValue()) {
      const next = this.single();
      if (next === undefined) break;
      v = concat(v, next);
    }
    return v;
  }

  private single(): RslLiteral | RslVariable | undefined {
    if (this.lx.peek() === 0x24 /* $ */) return this.lx.readVariable();
    return this.lx.readString();
  }
}

interface MutableConcat {
  kind: 'concat';
  parts: Array<RslLiteral | RslVariable>;
  start: number;
  end: number;
}

/** Joins two operands; a concat on the left is extended in place (it is ours), keeping chains linear. */
function concat(left: RslValue, right: RslValue): RslConcat {
  if (left.kind === 'sequence')
    throw new RslError('Left operand for RSL concatenation does not evaluate to a literal', left.start, 'semantic');
  if (right.kind === 'sequence')
    throw new RslError('Right operand for RSL concatenation does not evaluate to a literal', right.start, 'semantic');
  const out: MutableConcat =
    left.kind === 'concat'
      ? (left as MutableConcat)
      : { kind: 'concat', parts: [left], start: left.start, end: left.end };
  if (right.kind === 'concat') for (const p of right.parts) out.parts.push(p);
  else out.parts.push(right);
  out.end = right.end;
  return out;
}

/** A-REX compares attribute names lower-cased with every `_` removed. */
export function normaliseAttribute(name: string): string {
  return name.toLowerCase().replaceAll('_', '');
}
