// docs/lifecycle.md draws the code's transition table: the Mermaid source in the document
// must be exactly what src/engine/lifecycle-diagram.ts generates from TRANSITIONS.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { lifecycleMermaid } from '../../src/engine/lifecycle-diagram.js';

it('docs/lifecycle.md holds the diagram of the current transition table', () => {
  // Tests run with the repository root as working directory.
  const doc = readFileSync('docs/lifecycle.md', 'utf8');
  const m = /<!-- BEGIN lifecycle diagram[^\n]*-->\n```mermaid\n([\s\S]*?)\n```\n<!-- END lifecycle diagram -->/.exec(
    doc,
  );
  assert.ok(m, 'diagram markers missing from docs/lifecycle.md');
  assert.equal(
    m[1],
    lifecycleMermaid(),
    'regenerate the diagram: node -e "import(\'./dist/src/engine/lifecycle-diagram.js\').then((m) => console.log(m.lifecycleMermaid()))"',
  );
});

it('the diagram names every position and every allowed move', () => {
  const d = lifecycleMermaid();
  for (const p of [
    'ACCEPTED',
    'PENDING_ACCEPTED',
    'PREPARING',
    'PENDING_PREPARING',
    'SUBMIT',
    'INLRMS',
    'PENDING_INLRMS',
    'FINISHING',
    'CANCELING',
    'FINISHED',
    'DELETED',
  ]) {
    assert.match(d, new RegExp(`^    ${p} : REST `, 'm'), p);
  }
  assert.match(d, /^    INLRMS --> CANCELING : kill-requested, processing-failed$/m);
  assert.match(d, /^    FINISHED --> DELETED : lifetime-expired$/m);
});
