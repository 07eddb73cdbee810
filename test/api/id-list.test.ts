import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseIdList, type IdEntry } from '../../src/api/rest/jobs/id-list.js';
import { childrenNamed, el, textOf, type XmlElement, type XmlNode } from '../../src/doc/element.js';
import { jsonList, parseJsonObject, type JsonObject } from '../../src/doc/json-input.js';
import { CeError } from '../../src/errors/ce-error.js';

const JSON_CT = 'application/json';
const NONE = Symbol('no Content-Type');
// Invalid entries as `!reason`, so answers compare as plain strings.
const shown = (entries: readonly IdEntry[]): string[] =>
  entries.map((e) => (typeof e === 'string' ? e : `!${e.reason}`));
const parse = (text: string, ct: string | typeof NONE = JSON_CT, max = 100) =>
  shown(parseIdList(Buffer.from(text, 'utf8'), ct === NONE ? undefined : ct, max));
const NO_ID = '!Job entry has no id';
const EMPTY = '!Job id is empty';
const notString = (t: string) => `!Job id must be a string, not ${t}`;

function failure(fn: () => unknown): { code: string; status: number; message: string } {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof CeError, `a CeError, not ${String(e)}`);
    return { code: e.code, status: e.statusCode, message: e.message };
  }
  assert.fail('expected a failure');
}

/**
 * The oracle: the body converted to elements (object keys children, arrays siblings,
 * scalars text, null empty), as the service read JSON id lists before the direct reader,
 * with each non-string value marked by its JSON type (which the elements alone lose).
 */
function jsonToElement(rootName: string, text: string): XmlElement {
  const members = (o: JsonObject): XmlNode[] =>
    Object.entries(o).flatMap(([k, v]) => jsonList(v).map((item) => value(k, item)));
  const value = (name: string, v: unknown): XmlElement => {
    if (v === null || v === undefined) return el(name, undefined, { json: 'null' });
    if (typeof v === 'string') return el(name, v);
    if (typeof v === 'number' || typeof v === 'boolean') return el(name, String(v), { json: typeof v });
    return el(name, members(v as JsonObject), { json: 'object' });
  };
  return el(rootName, members(parseJsonObject(text)));
}

/** The reading through the document model, which the direct JSON reader must equal. */
function viaElements(text: string, max: number): string[] {
  const entries: string[] = [];
  const add = (e: string) => {
    if (entries.length >= max) throw new Error('too many');
    entries.push(e);
  };
  for (const job of childrenNamed(jsonToElement('jobs', text), 'job')) {
    const ids = childrenNamed(job, 'id');
    if (ids.length === 0) add(NO_ID);
    for (const idEl of ids) {
      const type = idEl.attrs?.['json'];
      if (type !== undefined) add(notString(type));
      else add(textOf(idEl).trim() === '' ? EMPTY : textOf(idEl).trim());
    }
  }
  return entries;
}

test('JSON id lists: array, single object, scalars as text, GET jobs output posted back', () => {
  assert.deepEqual(parse('{"job":[{"id":"a"},{"id":"b"}]}'), ['a', 'b']);
  assert.deepEqual(parse('{"job":{"id":"a"}}'), ['a']);
  assert.deepEqual(parse('{"job":[{"id":"a","state":"RUNNING"}]}'), ['a']);
  assert.deepEqual(parse('{"job":[{"id":" c "}]}'), ['c']);
  assert.deepEqual(parse('{"job":[{"id":["x","y"]}]}'), ['x', 'y'], 'several ids in one job are all taken');
  assert.deepEqual(parse('{"job":[]}'), []);
  assert.deepEqual(parse('{"jobs":[{"id":"a"}]}'), [], 'only job members count');
  assert.deepEqual(parse('{"job":[{"id":"a"}]}', 'application/json; charset=utf-8'), ['a']);
  assert.deepEqual(parse('  {"job":{"id":"a"}}', NONE), ['a'], 'JSON sniffed without a Content-Type');
  assert.deepEqual(parse('{"job":{"id":"a","__proto__":{"id":"b"}}}'), ['a']);
});

test('JSON entries that are not ids each keep their place, with the reason', () => {
  assert.deepEqual(
    parse('{"job":[{"id":"a"},{"id":1234567},{"id":true},{"id":null},{"id":{}},{"id":{"deep":"z"}},{"id":"b"}]}'),
    ['a', notString('number'), notString('boolean'), notString('null'), notString('object'), notString('object'), 'b'],
  );
  assert.deepEqual(
    parse('{"job":[{"id":["x",7,null,""]}]}'),
    ['x', notString('number'), notString('null'), EMPTY],
    'in an array of ids',
  );
  assert.deepEqual(parse('{"job":[{"id":""},{"id":"  "},{"nid":"q"},{"id":[]},"scalar",null,7,{}]}'), [
    EMPTY,
    EMPTY,
    NO_ID,
    NO_ID,
    NO_ID,
    NO_ID,
    NO_ID,
    NO_ID,
  ]);
  assert.deepEqual(parse('{"job":{"id":5}}'), [notString('number')], 'a single job object');
});

test('XML entries that are not ids each keep their place, with the reason', () => {
  const xml =
    '<jobs><job><id>a</id></job><job><id/></job><job><id>  </id></job><job/><job><state>X</state></job><job><id><x>b</x></id></job><job><id>c</id></job></jobs>';
  assert.deepEqual(parse(xml, NONE), ['a', EMPTY, EMPTY, NO_ID, NO_ID, '!Job id must be text, not elements', 'c']);
});

test('JSON id lists that break the rules are a 400 naming the rule', () => {
  for (const [body, why] of [
    ['{"job":[{"id":', /malformed JSON/],
    ['["a","b"]', /must be an object/],
    ['"a"', /must be an object/],
    ['null', /must be an object/],
    ['{"job":[["a"]]}', /nested arrays .*"job"/],
    ['{"job":[{"id":[["a"]]}]}', /nested arrays .*"id"/],
    ['{"x":' + '{"y":'.repeat(40) + '1' + '}'.repeat(41), /nested deeper than 32/],
  ] as const) {
    const f = failure(() => parse(body));
    assert.equal(f.code, 'CE_ERR_JOB_BAD_ID_LIST', body);
    assert.equal(f.status, 400);
    assert.match(f.message, why);
  }
});

test('id lists: more ids than the cap is a 413, however they are spread', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `j${i}` }));
  assert.equal(parse(JSON.stringify({ job: ids(5) }), JSON_CT, 5).length, 5);
  for (const body of [
    JSON.stringify({ job: ids(6) }),
    JSON.stringify({ job: [{ id: ['a', 'b', 'c', 'd', 'e', 'f'] }] }),
  ]) {
    const f = failure(() => parse(body, JSON_CT, 5));
    assert.equal(f.code, 'CE_ERR_JOB_TOO_MANY_IDS');
    assert.equal(f.status, 413);
  }
  const xml = `<jobs>${ids(6)
    .map((j) => `<job><id>${j.id}</id></job>`)
    .join('')}</jobs>`;
  assert.equal(failure(() => parse(xml, 'application/xml', 5)).status, 413);
  assert.equal(
    failure(() => parse(JSON.stringify({ job: [...ids(4), { id: '  ' }, { id: 3 }] }), JSON_CT, 5)).status,
    413,
    'invalid entries count: each is an answer',
  );
});

test('XML id lists: with or without Content-Type, prefixed names, unknown media types 415', () => {
  assert.deepEqual(parse('<jobs><job><id>a</id></job><job><id> b </id><state>X</state></job></jobs>', NONE), [
    'a',
    'b',
  ]);
  assert.deepEqual(parse('<p:jobs xmlns:p="urn:x"><p:job><p:id>a</p:id></p:job></p:jobs>', 'text/xml'), ['a']);
  assert.equal(failure(() => parse('<jobs><job><id>a</job></jobs>', 'application/xml')).status, 400);
  const f = failure(() => parse('a', 'text/plain'));
  assert.equal(f.code, 'CE_ERR_JOB_BAD_ID_LIST_TYPE');
  assert.equal(f.status, 415);
  assert.deepEqual(parse('   \n', 'text/plain'), [], 'an empty body is an empty list whatever its type');
});

test('the direct JSON reader gives what the document model gives, for random bodies', () => {
  const scalar = fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.constantFrom('', ' ', ' p q ', 'a'),
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
  );
  const key = fc.constantFrom('job', 'id', 'x:job', 'a:id', 'state', 'ID', ':id', 'jobs');
  const tree = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, scalar, tie('object'), tie('array')),
    array: fc.array(fc.oneof(scalar, tie('object'), fc.array(scalar, { maxLength: 2 })), { maxLength: 4 }),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  }));
  // Mostly well-formed lists with noise mixed in, so every branch is reached often.
  // Ids are mostly strings, so valid and invalid entries mix in one list.
  const idValue = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('a', ' b ', 'c d') },
    { weight: 2, arbitrary: scalar },
  );
  const jobEntry = fc.oneof(
    fc.record({
      id: fc.oneof(idValue, fc.array(fc.oneof(idValue, fc.array(scalar, { maxLength: 1 })), { maxLength: 3 })),
    }),
    fc
      .tuple(fc.dictionary(key, tree.value, { maxKeys: 2 }), fc.constantFrom('id', 'a:id'), idValue)
      .map(([o, k, v]) => ({ ...o, [k]: v })),
    tree.value,
  );
  const body = fc
    .tuple(
      tree.object,
      fc.constantFrom('job', 'x:job', 'other'),
      fc.oneof(jobEntry, fc.array(jobEntry, { maxLength: 6 })),
    )
    .map(([o, k, v]) => ({ ...o, [k]: v }));
  const MAX = 3;
  let withIds = 0;
  let withInvalid = 0;
  let tooMany = 0;
  fc.assert(
    fc.property(body, (b) => {
      const text = JSON.stringify(b);
      let expected: string[] | string;
      try {
        expected = viaElements(text, MAX);
      } catch (e) {
        expected =
          e instanceof Error && e.message === 'too many' ? 'CE_ERR_JOB_TOO_MANY_IDS' : 'CE_ERR_JOB_BAD_ID_LIST';
      }
      let got: string[] | string;
      try {
        got = parse(text, JSON_CT, MAX);
      } catch (e) {
        got = e instanceof CeError ? e.code : String(e);
      }
      assert.deepEqual(got, expected, text);
      if (Array.isArray(got) && got.some((e) => !e.startsWith('!'))) withIds++;
      if (Array.isArray(got) && got.some((e) => e.startsWith('!'))) withInvalid++;
      if (got === 'CE_ERR_JOB_TOO_MANY_IDS') tooMany++;
    }),
    { numRuns: 1_000, seed: 20261122 },
  );
  // The generator must reach the interesting cases: ids, invalid entries, the cap.
  assert.ok(withIds > 80, `only ${withIds} bodies had ids`);
  assert.ok(withInvalid > 80, `only ${withInvalid} bodies had invalid entries`);
  assert.ok(tooMany > 10, `only ${tooMany} bodies went over the cap`);
});
