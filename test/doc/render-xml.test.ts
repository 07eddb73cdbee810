import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { el } from '../../src/doc/element.js';
import { escapeAttr, escapeText, renderXml } from '../../src/doc/render-xml.js';
import { parseXml } from '../../src/doc/parse-xml.js';
import { textOf, firstChild } from '../../src/doc/element.js';

test('text escaping: markup characters and CR escaped, forbidden controls dropped, the rest untouched', () => {
  assert.equal(escapeText('plain-id_0123 ünï ✓'), 'plain-id_0123 ünï ✓');
  assert.equal(escapeText('a&b<c>d\re'), 'a&amp;b&lt;c&gt;d&#13;e');
  assert.equal(escapeText('x\u0000y\u0008z\u000bw\u001f\ufffe'), 'xyzw');
  // Quotes, tabs and newlines are fine in text; only attributes need them escaped.
  assert.equal(escapeText('"q"\t\n'), '"q"\t\n');
  assert.equal(escapeAttr('"q"\t\n<&'), '&quot;q&quot;&#9;&#10;&lt;&amp;');
  assert.equal(escapeAttr('plain'), 'plain');
});

test('renderXml: nested elements, attributes, self-closed empties', () => {
  const doc = el('jobs', [el('job', [el('id', 'a&b'), el('state', 'FINISHED')], { n: '1"' }), el('empty')]);
  assert.equal(renderXml(doc), '<jobs><job n="1&quot;"><id>a&amp;b</id><state>FINISHED</state></job><empty/></jobs>');
});

test('renderXml output parses back to the same text for any string', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 20 }), (text, attr) => {
      const xml = renderXml(el('r', [el('t', text)], { a: attr }));
      const back = parseXml(Buffer.from(xml, 'utf8'));
      // CR, tab and newline go out as character references, which XML parsers keep as they are.
      // eslint-disable-next-line no-control-regex
      const expected = text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
      const t = firstChild(back, 't');
      assert.ok(t);
      assert.equal(textOf(t), expected);
      // eslint-disable-next-line no-control-regex
      assert.equal(back.attrs?.a, attr.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, ''));
    }),
    { numRuns: 500 },
  );
});

test('el flattens nested arrays and skips null, undefined and false; numbers become text', () => {
  const e = el('a', [null, 'x', [el('b'), [false, undefined, el('c')]], 3 as never]);
  assert.deepEqual(
    e.children.map((c) => (typeof c === 'string' ? c : c.name)),
    ['x', 'b', 'c', '3'],
  );
  assert.deepEqual(el('n', 7).children, ['7']);
  assert.deepEqual(el('z').children, []);
});
