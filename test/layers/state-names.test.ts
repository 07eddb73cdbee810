// The job-state names are written once, in src/vocabulary/job-states.ts (docs/architecture.md).
// In TypeScript the compiler checks every other use against the unions derived there; inside
// SQL text it checks nothing, so a state renamed or added would silently miss a query. SQL
// takes its state lists from the vocabulary (src/store/state-list.ts): no SQL literal in src
// names a state.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { INTERNAL_STATES, POSITIONS, REST_STATES } from '../../src/vocabulary/job-states.js';

// Tests run with the repository root as working directory (npm test).
const SRC = 'src';
const SQL = /\b(SELECT|UPDATE|INSERT|DELETE FROM|WHERE)\b/;
const NAMES = [...new Set<string>([...INTERNAL_STATES, ...REST_STATES, ...POSITIONS])];
const QUOTED_NAME = new RegExp(`'(${NAMES.join('|')})'`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Line numbers of the SQL literals (strings, whole templates) of a TypeScript text that name a job state. */
function stateNamesInSql(text: string): number[] {
  // Only a text that has both is parsed (parsing every file would take seconds).
  if (!SQL.test(text) || !QUOTED_NAME.test(text)) return [];
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (n: ts.Node): void => {
    // A template's own text, its substitutions as `?`: a name given through code is checked by the compiler.
    const literal = ts.isStringLiteralLike(n)
      ? n.text
      : ts.isTemplateExpression(n)
        ? n.head.text + n.templateSpans.map((span) => `?${span.literal.text}`).join('')
        : undefined;
    if (literal !== undefined && SQL.test(literal) && QUOTED_NAME.test(literal)) {
      lines.push(source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return lines;
}

describe('job-state names in SQL', () => {
  it('no SQL text in src names a job state: the lists come from the vocabulary', () => {
    const files = sourceFiles(SRC).filter((f) => !f.startsWith(join(SRC, 'vocabulary')));
    assert.ok(files.length > 100, 'the source tree was found');
    const found = files.flatMap((f) => stateNamesInSql(readFileSync(f, 'utf8')).map((line) => `${f}:${line}`));
    assert.deepEqual(found, []);
  });

  it('the scan finds a state written into a query, in a string or a template', () => {
    assert.deepEqual(stateNamesInSql(`db.prepare("SELECT id FROM jobs WHERE state IN ('FINISHED','DELETED')");`), [1]);
    assert.deepEqual(
      stateNamesInSql("const q = 1;\ndb.prepare(`SELECT 1 FROM jobs WHERE x = ${y} AND rest_state != 'WIPED'`);"),
      [2],
    );
    assert.deepEqual(stateNamesInSql(`const s = 'FINISHED'; db.prepare('SELECT 1 FROM jobs WHERE state = ?');`), []);
    assert.deepEqual(stateNamesInSql("db.prepare(`SELECT 1 FROM jobs WHERE state = ${sqlState('FINISHED')}`);"), []);
  });
});
