/**
 * RSL evaluation: variable substitution and concatenation, turning the syntax tree of
 * one request into a flat list of relations whose values are strings and sequences.
 *
 * `(rsl_substitution=("NAME" "value") ...)` defines variables for the relations that
 * follow it in the same `&`/`|` group and in groups nested there; an undefined variable
 * expands to the empty string. For `|`, the first branch is the description and the
 * others are alternatives (only client-side brokering uses them; we evaluate them so that
 * their errors are reported, then drop them).
 *
 * Expansion is budgeted: a variable defined from other variables can grow exponentially
 * ("billion laughs" in RSL), so the total expanded text is capped relative to the input.
 */
import { RslError } from './syntax.js';
import type { RelOp, RslNode, RslRelation, RslValue } from './syntax.js';

export type EvalValue = string | EvalSequence;
export interface EvalSequence {
  readonly items: readonly EvalValue[];
  readonly start: number;
}

export interface EvalRelation {
  readonly attribute: string;
  readonly op: RelOp;
  readonly values: readonly EvalValue[];
  /** Offset of the relation in the text, for error positions. */
  readonly start: number;
}

export interface EvaluatedRequest {
  readonly relations: EvalRelation[];
  readonly alternatives: EvalRelation[][];
}

class Scope {
  private vars: Map<string, string> | undefined;
  constructor(private readonly parent: Scope | undefined) {}
  define(name: string, value: string): void {
    (this.vars ??= new Map()).set(name, value);
  }
  lookup(name: string): string {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walks the scope chain up from this one
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const v = s.vars?.get(name);
      if (v !== undefined) return v;
    }
    return '';
  }
}

/** Characters variable expansion may still produce; shared by all requests of one body. */
export interface ExpansionBudget {
  remaining: number;
}

export function evaluateRequest(node: RslNode, budget: ExpansionBudget): EvaluatedRequest {
  const ev = new Evaluator(budget);
  const relations: EvalRelation[] = [];
  const alternatives: EvalRelation[][] = [];
  ev.collect(node, new Scope(undefined), relations, alternatives);
  return { relations, alternatives };
}

class Evaluator {
  constructor(private readonly budget: ExpansionBudget) {}

  collect(node: RslNode, scope: Scope, out: EvalRelation[], alts: EvalRelation[][]): void {
    if (node.kind === 'relation') {
      if (node.attribute === 'rslsubstitution') this.substitution(node, scope);
      else
        out.push({
          attribute: node.attribute,
          op: node.op,
          values: this.values(node.values, scope),
          start: node.start,
        });
      return;
    }
    if (node.op === '+') throw new RslError('Multi-request operator only allowed at top level', node.start, 'semantic');
    const inner = new Scope(scope);
    if (node.op === '&') {
      for (const o of node.operands) this.collect(o, inner, out, alts);
      return;
    }
    node.operands.forEach((o, i) => {
      if (i === 0) this.collect(o, inner, out, alts);
      else {
        const alt: EvalRelation[] = [];
        this.collect(o, new Scope(scope), alt, alts);
        alts.push(alt);
      }
    });
  }

  /** Pairs are defined one after the other: a pair may use the ones before it. */
  private substitution(rel: RslRelation, scope: Scope): void {
    for (const raw of rel.values) {
      const v = this.value(raw, scope);
      if (typeof v === 'string') throw new RslError('RSL substitution is not a sequence', rel.start, 'semantic');
      if (v.items.length !== 2) throw new RslError('RSL substitution sequence is not of length 2', v.start, 'semantic');
      const [name, value] = v.items;
      if (typeof name !== 'string')
        throw new RslError('RSL substitution variable name does not evaluate to a literal', v.start, 'semantic');
      if (typeof value !== 'string')
        throw new RslError('RSL substitution variable value does not evaluate to a literal', v.start, 'semantic');
      scope.define(name, value);
    }
  }

  private values(vs: readonly RslValue[], scope: Scope): EvalValue[] {
    const out: EvalValue[] = new Array<EvalValue>(vs.length);
    for (let i = 0; i < vs.length; i++) out[i] = this.value(vs[i] as RslValue, scope);
    return out;
  }

  private value(v: RslValue, scope: Scope): EvalValue {
    switch (v.kind) {
      case 'literal':
        return v.value;
      case 'variable':
        return this.spend(scope.lookup(v.name), v.start);
      case 'sequence':
        return { items: this.values(v.items, scope), start: v.start };
      case 'concat': {
        const parts: string[] = new Array<string>(v.parts.length);
        let len = 0;
        for (let i = 0; i < v.parts.length; i++) {
          const p = v.parts[i];
          if (p === undefined) continue;
          const s = p.kind === 'literal' ? p.value : scope.lookup(p.name);
          parts[i] = s;
          len += s.length;
        }
        this.charge(len, v.start);
        return parts.join('');
      }
    }
  }

  private spend(s: string, at: number): string {
    this.charge(s.length, at);
    return s;
  }

  private charge(n: number, at: number): void {
    this.budget.remaining -= n;
    if (this.budget.remaining < 0)
      throw new RslError('Variable substitution expands beyond the allowed size', at, 'semantic');
  }
}
