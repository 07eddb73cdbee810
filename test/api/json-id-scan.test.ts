import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { scanJsonIdList } from '../../src/api/rest/jobs/json-id-scan.js';
import { parseIdList } from '../../src/api/rest/jobs/id-list.js';
import { CeError } from '../../src/errors/ce-error.js';

/** What JSON.parse reads, when it is exactly the shape the scanner takes. */
function parsedIds(text: string): string[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).join() !== 'job' || !Array.isArray(o.job)) return undefined;
  const ids: string[] = [];
  for (const j of o.job as unknown[]) {
    if (j === null || typeof j !== 'object' || Array.isArray(j)) return undefined;
    const m = j as Record<string, unknown>;
    if (Object.keys(m).join() !== 'id' || typeof m.id !== 'string') return undefined;
    ids.push(m.id);
  }
  return ids;
}

const space = fc.constantFrom('', ' ', '\n', '\r\n\t ', '  ');
const id = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('', ' a ', 'x"y', 'a\\b', '\u0001', '\u2028', '😀', 'ünï', 'abcdefghijklmnopqrstuvwxyz'),
);
/** A list of the common shape, written with random whitespace; ids raw or JSON-escaped. */
const list = fc
  .tuple(fc.array(fc.tuple(id, fc.boolean()), { maxLength: 6 }), fc.array(space, { minLength: 40, maxLength: 40 }))
  .map(([ids, ws]) => {
    let k = 0;
    const w = () => ws[k++ % ws.length] as string;
    const items = ids.map(([s, raw]) => `{${w()}"id"${w()}:${w()}${raw ? `"${s}"` : JSON.stringify(s)}${w()}}`);
    return `${w()}{${w()}"job"${w()}:${w()}[${w()}${items.join(`${w()},${w()}`)}${w()}]${w()}}${w()}`;
  });

test('the scanner reads exactly what JSON.parse reads, or leaves the text to the general reader', () => {
  fc.assert(
    fc.property(list, (text) => {
      const scanned = scanJsonIdList(text);
      if (scanned !== undefined) assert.deepEqual(scanned, parsedIds(text));
    }),
    { numRuns: 2000 },
  );
});

test('the scanner takes the common shape, with whitespace anywhere JSON allows it', () => {
  assert.deepEqual(scanJsonIdList('{"job":[{"id":"a"},{"id":"b"}]}'), ['a', 'b']);
  assert.deepEqual(scanJsonIdList(' \r\n{ "job" : [ { "id" : " a " } , {"id":""} ] }\t'), [' a ', '']);
  assert.deepEqual(scanJsonIdList('{"job":[]}'), []);
});

test('anything but the common shape is left to the general reader', () => {
  for (const text of [
    '{"job":{"id":"a"}}', // one job, not an array
    '{"job":[{"id":"a","state":"RUNNING"}]}', // another member
    '{"job":[{"state":"x","id":"a"}]}',
    '{"job":[{"id":["a","b"]}]}',
    '{"job":[{"id":1}]}',
    '{"job":[{"id":null}]}',
    '{"job":[{"id":"a\\"b"}]}', // an escape
    '{"job":[{"id":"a\\u0041"}]}',
    '{"job":[{"id":"a\u0001"}]}', // a raw control character: invalid JSON
    '{"job":[{"id":"a"}],"x":1}',
    '{"x":1,"job":[{"id":"a"}]}',
    '{"ns:job":[{"id":"a"}]}',
    '{"job":[{"id":"a"},]}', // invalid JSON
    '{"job":[{"id":"a"}]',
    '{"job":[{"id":"a"}]}x',
    '{"job":[{"id":"a}]}',
    '{"job":[{"id":"a"}',
    '{"job":[',
    '{"job"',
    '[{"id":"a"}]',
    '\u00a0{"job":[]}', // not JSON whitespace
    '',
  ])
    assert.equal(scanJsonIdList(text), undefined, text);
});

test('id lists read the same through the scanner and through the general reader', () => {
  // The general reader alone: the same list with a member the scanner does not take.
  const general = (text: string) => text.replace(/}\s*$/, ',"x":0}');
  const entries = (text: string) => {
    try {
      return parseIdList(Buffer.from(text, 'utf8'), 'application/json', 5).map((e) =>
        typeof e === 'string' ? e : `!${e.reason}`,
      );
    } catch (e) {
      assert.ok(e instanceof CeError);
      return `${e.code}: ${e.message}`;
    }
  };
  fc.assert(
    fc.property(list, (text) => {
      if (parsedIds(text) === undefined) return;
      assert.deepEqual(entries(text), entries(general(text)));
    }),
    { numRuns: 1000 },
  );
});
