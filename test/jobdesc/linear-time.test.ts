/**
 * Parse work grows linearly with input size, for the input shapes that would expose a
 * quadratic path: long strings with escapes, many comments, many relations and
 * variables, bounded-but-repeated nesting, many `+` operands (each failing, so each needs
 * a line:column), ADL with many elements, bulk ADL.
 *
 * We count work instead of measuring time, because timings on a shared machine swing by
 * several times (load, and garbage collection whose cost jumps once a parse outgrows the
 * young generation). Work = the characters and elements the standard string and array
 * methods visit while the submission is parsed, counted by wrapping those methods for
 * the duration of one call: the lexers and saxes scan through charCodeAt/indexOf/slice,
 * so a rescan from the start, a per-error line count or an array copy per item all show.
 * The count is deterministic: linear work gives a 10x-size ratio of about 10, a
 * quadratic path about 100. We assert < 15.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCeError } from '../../src/errors/ce-error.js';
import { splitSubmission } from '../../src/jobdesc/split-submission.js';
import { bigAdl, bigXrsl, bulkAdl } from './fixtures/samples.js';

const KB = 1024;
const SMALL = 64 * KB;
const LARGE = 640 * KB;
const limits = { maxDescriptionBytes: 16 * 1024 * KB, maxItems: 1_000_000 };

function fill(unit: (i: number) => string, head: string, tail: string, bytes: number): string {
  const parts = [head];
  let size = head.length + tail.length;
  for (let i = 0; size < bytes; i++) {
    const u = unit(i);
    parts.push(u);
    size += u.length;
  }
  parts.push(tail);
  return parts.join('');
}

const shapes: Record<string, (bytes: number) => string> = {
  'xRSL arguments with escapes': bigXrsl,
  'xRSL many comments': (n) => fill(() => '(* comment (* with ( and " *)', '&(executable=/bin/true)', '', n),
  'xRSL many relations and variables': (n) =>
    fill((i) => `(x${i}=$(A)$(B) "q""q" # r)`, '&(rsl_substitution=("A" "a")("B" "b"))', '', n),
  'xRSL doubled quotes in one string': (n) => fill(() => '""', '&(jobname="', '")', n),
  'xRSL user delimiters with doubled delimiters': (n) => fill(() => 'ab##', '&(jobname=^#', '#)', n),
  'xRSL bounded nesting, repeated': (n) => fill(() => `(&${'(&'.repeat(30)}(y=z)${')'.repeat(30)})`, '&(x=y)', '', n),
  'multi-xRSL, each operand failing': (n) => fill(() => '\n(&(count=x))', '+', '', n),
  'multi-xRSL, many small jobs': (n) =>
    fill((i) => `(&(executable=/bin/true)(jobname=j${i})(inputfiles=("a" "https://h/a")))`, '+', '', n),
  'ADL many arguments': bigAdl,
  'bulk ADL': (n) => bulkAdl(Math.max(1, Math.floor(n / 540))),
  'bulk ADL, each item failing': (n) =>
    fill(
      () => '<ActivityDescription><Resources><NetworkInfo/></Resources></ActivityDescription>',
      '<ActivityDescriptions xmlns="http://www.eu-emi.eu/es/2010/12/adl">',
      '</ActivityDescriptions>',
      n,
    ),
};

type Cost = (self: { length: number }, args: unknown[], result: unknown) => number;

const one: Cost = () => 1;
const selfLength: Cost = (self) => self.length;
const resultLength: Cost = (_s, _a, r) => (typeof r === 'string' || Array.isArray(r) ? r.length : 1);
/** indexOf visits from its start position up to the match (or the end). */
const scanned: Cost = (self, args, r) => {
  const from = typeof args[1] === 'number' ? Math.max(0, args[1]) : 0;
  const needle = typeof args[0] === 'string' ? args[0].length : 1;
  return Math.max(1, (typeof r === 'number' && r >= 0 ? r + needle : self.length) - from);
};

const stringCosts: Record<string, Cost> = {
  charCodeAt: one,
  codePointAt: one,
  charAt: one,
  at: one,
  indexOf: scanned,
  lastIndexOf: selfLength,
  includes: selfLength,
  startsWith: (_s, a) => (typeof a[0] === 'string' ? a[0].length : 1),
  endsWith: selfLength,
  slice: resultLength,
  substring: resultLength,
  trim: selfLength,
  trimStart: selfLength,
  trimEnd: selfLength,
  toLowerCase: selfLength,
  toUpperCase: selfLength,
  split: selfLength,
  replace: selfLength,
  replaceAll: selfLength,
  repeat: resultLength,
  normalize: selfLength,
};
const arrayCosts: Record<PropertyKey, Cost> = {
  push: one,
  pop: one,
  includes: selfLength,
  indexOf: selfLength,
  lastIndexOf: selfLength,
  some: selfLength,
  every: selfLength,
  find: selfLength,
  findIndex: selfLength,
  filter: selfLength,
  map: selfLength,
  forEach: selfLength,
  reduce: selfLength,
  join: selfLength,
  slice: resultLength,
  concat: resultLength,
  splice: selfLength,
  unshift: selfLength,
  shift: selfLength,
  reverse: selfLength,
  sort: selfLength,
  values: selfLength,
  entries: selfLength,
  keys: selfLength,
  [Symbol.iterator]: selfLength,
};

/** Work done by `fn` as visited by the wrapped string and array methods. */
function countWork(fn: () => void): number {
  let work = 0;
  const restore: Array<() => void> = [];
  const wrap = (proto: object, costs: Record<PropertyKey, Cost>): void => {
    const target = proto as Record<PropertyKey, unknown>;
    for (const key of Reflect.ownKeys(costs)) {
      const orig = target[key] as (...a: unknown[]) => unknown;
      const cost = costs[key] as Cost;
      target[key] = function (this: { length: number }, ...args: unknown[]): unknown {
        const r = Reflect.apply(orig, this, args);
        work += cost(this, args, r);
        return r;
      };
      restore.push(() => {
        target[key] = orig;
      });
    }
  };
  wrap(String.prototype, stringCosts);
  wrap(Array.prototype, arrayCosts);
  try {
    fn();
  } finally {
    for (const r of restore.reverse()) r();
  }
  return work;
}

function run(body: Buffer): void {
  try {
    splitSubmission(body, limits);
  } catch (e) {
    if (!isCeError(e)) throw e;
  }
}

describe('parse work grows linearly with input size', { timeout: 300_000 }, () => {
  it('counts real work (the counter sees a quadratic loop)', () => {
    const quadratic = (n: number): void => {
      const s = 'x'.repeat(n);
      for (let i = 0; i < n; i++) s.indexOf('y');
    };
    const ratio = countWork(() => quadratic(2000)) / countWork(() => quadratic(200));
    assert.ok(ratio > 90, `ratio ${ratio}`);
  });

  for (const [name, make] of Object.entries(shapes)) {
    it(name, () => {
      const small = Buffer.from(make(SMALL));
      const large = Buffer.from(make(LARGE));
      assert.ok(
        large.length > 9 * small.length && large.length < 11 * small.length,
        `sizes ${small.length} / ${large.length}`,
      );
      const ws = countWork(() => run(small));
      const wl = countWork(() => run(large));
      assert.ok(
        ws >= small.length,
        `the parse of ${small.length} bytes visited only ${ws} units: the counter is not seeing it`,
      );
      const ratio = wl / ws;
      assert.ok(
        ratio < 15,
        `work ${wl} for ${large.length} bytes vs ${ws} for ${small.length} bytes: ratio ${ratio.toFixed(1)}`,
      );
    });
  }
});
