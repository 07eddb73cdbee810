/**
 * The RSL syntax tree. Offsets are UTF-16 indexes into the parsed text; `start`/`end`
 * delimit the construct (`end` exclusive), so a `+` operand's own text is
 * `text.slice(op.start, op.end)`.
 */

export type RelOp = '=' | '!=' | '<' | '>' | '<=' | '>=';

export interface RslLiteral {
  readonly kind: 'literal';
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

export interface RslVariable {
  readonly kind: 'variable';
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

/** Explicit (`#`) or implicit (touching) concatenation; parts are never sequences or concats. */
export interface RslConcat {
  readonly kind: 'concat';
  readonly parts: ReadonlyArray<RslLiteral | RslVariable>;
  readonly start: number;
  readonly end: number;
}

export interface RslSequence {
  readonly kind: 'sequence';
  readonly items: readonly RslValue[];
  readonly start: number;
  readonly end: number;
}

export type RslValue = RslLiteral | RslVariable | RslConcat | RslSequence;

export interface RslRelation {
  readonly kind: 'relation';
  /** Normalised: lower-case, `_` removed (`CPU_Time` is `cputime`). */
  readonly attribute: string;
  readonly op: RelOp;
  readonly values: readonly RslValue[];
  readonly start: number;
  readonly end: number;
}

export interface RslBoolean {
  readonly kind: 'boolean';
  readonly op: '&' | '|' | '+';
  /** Each operand is the request inside one `( ... )`. */
  readonly operands: readonly RslNode[];
  readonly start: number;
  readonly end: number;
}

export type RslNode = RslRelation | RslBoolean;

/**
 * Where an error was found, which decides whether the xRSL parser "claims" the text.
 * A-REX reports `nordugrid:xrsl parsing error` only once at least one relation has been
 * parsed or when the error comes from evaluation/attribute checks; earlier errors, and
 * an unterminated comment anywhere (found by a pre-scan), leave the text unclaimed:
 * "No job description parser was able to interpret job description".
 */
export type RslErrorKind = 'syntax' | 'comment' | 'semantic';

/** A syntax or evaluation error at an offset of the parsed text. */
export class RslError extends Error {
  override readonly name = 'RslError';
  /** Settled by the parser for syntax errors; always true for semantic, false for comment ones. */
  claimed: boolean;
  readonly offset: number;
  readonly kind: RslErrorKind;
  constructor(message: string, offset: number, kind: RslErrorKind) {
    // Expected control flow, thousands per bulk request: skip capturing a stack trace.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.offset = offset;
    this.kind = kind;
    this.claimed = kind === 'semantic';
  }
}
