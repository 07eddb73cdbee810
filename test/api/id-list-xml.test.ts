// XML job id lists: the plain shape clients send is scanned directly (id-list-xml.ts),
// everything else goes to the general parser. The answer (the entries, or the 4xx with its
// message) must be the one the general parser gave for every document (legacy-id-list.ts),
// and hostile documents must still get their clear 400/413.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseIdList, type IdEntry } from '../../src/api/rest/jobs/id-list.js';
import { NO_ID, scanIdListXml } from '../../src/api/rest/jobs/id-list-xml.js';
import { CeError } from '../../src/errors/ce-error.js';
import { legacyParseIdList } from './legacy-id-list.js';
import { nastyText } from '../helpers/nasty-text.js';

type Outcome = string[] | { code: string; status: number; message: string };

const shown = (entries: readonly IdEntry[]): string[] =>
  entries.map((e) => (typeof e === 'string' ? e : `!${e.reason}`));

function outcome(f: () => readonly IdEntry[]): Outcome {
  try {
    return shown(f());
  } catch (e) {
    assert.ok(e instanceof CeError, `a CeError, not ${String(e)}`);
    return { code: e.code, status: e.statusCode, message: e.message };
  }
}

const both = (body: Buffer | string, ct: string | undefined, max: number): [Outcome, Outcome] => {
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return [outcome(() => parseIdList(b, ct, max)), outcome(() => legacyParseIdList(b, ct, max))];
};

const list = (ids: readonly string[]): string =>
  `<jobs>${ids.map((id) => `<job><id>${id}</id></job>`).join('')}</jobs>`;

test('the ARC client shape and GET jobs posted back are scanned directly, with the same entries', () => {
  const cases: [string, (string | typeof NO_ID)[]][] = [
    [list(['a', 'b']), ['a', 'b']],
    ['<jobs/>', []],
    ['  <jobs>\n  <job>\n    <id> a </id>\n    <state>RUNNING</state>\n  </job>\r\n</jobs>\n', [' a ']],
    ['\uFEFF<jobs><job/><job><id/></job><job><state>X</state></job><other>t</other></jobs>', [NO_ID, '', NO_ID]],
    ['<jobs><job><id>x</id><id>y</id></job></jobs>', ['x', 'y']],
    ['<jobs><job><id>ünï 😀 > ]] ></id></job></jobs>', ['ünï 😀 > ]] >']],
  ];
  for (const [xml, raw] of cases) {
    const text = xml.charCodeAt(0) === 0xfeff ? xml.slice(1) : xml;
    assert.deepEqual(scanIdListXml(text, 1000), raw, xml);
    const [now, before] = both(xml, undefined, 100);
    assert.deepEqual(now, before, xml);
  }
});

test('anything but the plain shape is left to the general parser', () => {
  for (const xml of [
    '<?xml version="1.0"?><jobs/>',
    '<!DOCTYPE jobs><jobs/>',
    '<jobs><!-- c --></jobs>',
    '<jobs><job><id>a&amp;b</id></job></jobs>',
    '<jobs><job><id><![CDATA[a]]></id></job></jobs>',
    '<jobs><job><id>a\r\nb</id></job></jobs>',
    '<jobs><job><id>a]]>b</id></job></jobs>',
    '<jobs><job><id>a\u0001</id></job></jobs>',
    '<jobs><job><id>\uFFFE</id></job></jobs>',
    '<jobs><job id="a"/></jobs>',
    '<jobs ><job/></jobs>',
    '<p:jobs xmlns:p="urn:x"/>',
    '<jobs><job><id><x>b</x></id></job></jobs>',
    '<jobs>text<job/></jobs>',
    '<jobs><job/></jobs>trailing',
    '<jobs><job><id>a</id></jobs>',
    '<jobs><job><id>a</ID></job></jobs>',
    '<jobs><job><id>a</id></job>',
    '<Jobs/>',
    '<foo><job><id>a</id></job></foo>',
    '<jobs><a><b/></a></jobs>',
  ]) {
    assert.equal(scanIdListXml(xml, 1000), undefined, xml);
  }
  assert.equal(scanIdListXml(list(['a', 'b', 'c']), 6), undefined, 'more elements than the limit');
});

test('hostile XML gets the same clear 400 or 413 as before', () => {
  const deep = '<jobs>' + '<job>'.repeat(20) + '</job>'.repeat(20) + '</jobs>';
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><jobs><job><id>&b;</id></job></jobs>';
  const external = '<!DOCTYPE jobs SYSTEM "file:///etc/passwd"><jobs><job><id>a</id></job></jobs>';
  const manyIds = list(Array.from({ length: 1500 }, (_, i) => `j${i}`));
  const manyElements = '<jobs>' + '<x/>'.repeat(5000) + '</jobs>';
  const cases: [string, Buffer | string, number][] = [
    ['malformed', '<jobs><job><id>a</job></jobs>', 400],
    ['undefined entity', '<jobs><job><id>&nope;</id></job></jobs>', 400],
    ['billion laughs', laughs, 400],
    ['external entity', external, 400],
    ['deep nesting', deep, 400],
    [
      'not UTF-8',
      Buffer.from([0x3c, 0x6a, 0x6f, 0x62, 0x73, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x6a, 0x6f, 0x62, 0x73, 0x3e]),
      400,
    ],
    ['text outside the root', 'junk<jobs/>', 400],
    ['two roots', '<jobs/><jobs/>', 400],
    ['more ids than the cap', manyIds, 413],
    ['more elements than the limit', manyElements, 400],
    ['markup in an id is an item, not an error', '<jobs><job><id><b>x</b></id></job></jobs>', 0],
  ];
  for (const [what, body, status] of cases) {
    const [now, before] = both(body, undefined, 1000);
    assert.deepEqual(now, before, what);
    if (status === 0) assert.deepEqual(now, ['!Job id must be text, not elements'], what);
    else {
      assert.ok(!Array.isArray(now), what);
      assert.equal(now.status, status, what);
      assert.match(now.message, status === 413 ? /at most 1000 job ids/ : /^malformed job id list: /, what);
    }
  }
});

test('a million ids, or a hundred thousand: the same 400 as before, early', () => {
  const million = Buffer.from(`<jobs>${'<job><id>abcdefghij</id></job>'.repeat(1_000_000)}</jobs>`);
  const [now, before] = both(million, 'application/xml', 10_000);
  assert.deepEqual(now, before);
  assert.ok(!Array.isArray(now) && now.status === 400 && /larger than 16777216 bytes/.test(now.message));
  const many = Buffer.from(`<jobs>${'<job><id>abcdefghij</id></job>'.repeat(100_000)}</jobs>`);
  const [now2, before2] = both(many, 'application/xml', 10_000);
  assert.deepEqual(now2, before2);
  assert.ok(!Array.isArray(now2) && now2.status === 400 && /more than 40016 elements/.test(now2.message));
  assert.equal(shown(parseIdList(many, undefined, 100_000)).length, 100_000, 'under the caps it is read');
});

test('random documents, well-formed and not: the same entries or the same error as the general parser', () => {
  const idText = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('a', ' b ', 'c d', '', '  ', 'x\ty', 'ünï', '😀') },
    {
      weight: 2,
      arbitrary: nastyText(
        '&amp;',
        '&lt;x&gt;',
        '&#65;',
        '&nope;',
        '<![CDATA[c]]>',
        '\r\n',
        'a\r\nb',
        'a\rb',
        '\u0000',
      ),
    },
  );
  const space = fc.constantFrom('', '', ' ', '\n  ', '\r\n', '\t');
  const name = fc.constantFrom('id', 'id', 'id', 'state', 'ID', 'p:id', 'x');
  const child = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(name, idText).map(([n, t]) => `<${n}>${t}</${n}>`) },
    { weight: 2, arbitrary: name.map((n) => `<${n}/>`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('<id a="1">q</id>', '<id><b>x</b></id>', '<id>a</ID>', '<!-- c -->', 'text', '<id>'),
    },
  );
  const job = fc.oneof(
    { weight: 5, arbitrary: fc.tuple(fc.array(fc.tuple(space, child), { maxLength: 3 }), space) },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  const jobXml = fc
    .tuple(job, fc.constantFrom('job', 'job', 'job', 'job', 'other', 'p:job'))
    .map(([j, n]) =>
      j === null ? `<${n}/>` : `<${n}>${j[0].map(([s, c]) => s + c).join('')}${j[1]}</${n.replace(/ .*/, '')}>`,
    );
  const doc = fc
    .tuple(
      fc.constantFrom('', '', '', '', '', '\uFEFF', ' \n', '<?xml version="1.0"?>', '<!DOCTYPE jobs>', 'x'),
      fc.constantFrom('jobs', 'jobs', 'jobs', 'jobs', 'jobs', 'jobs', 'Jobs', 'p:jobs xmlns:p="urn:x"', 'jobs a="1"'),
      fc.array(fc.tuple(space, jobXml), { maxLength: 6 }),
      space,
      fc.constantFrom('', '', '', '', '', '', ' ', 'tail', '<!-- c -->', '<jobs/>'),
      fc.option(fc.nat(), { nil: undefined }),
    )
    .map(([prolog, root, jobs, sp, tail, cut]) => {
      const rootName = root.replace(/ .*/, '');
      const s = `${prolog}<${root}>${jobs.map(([a, b]) => a + b).join('')}${sp}</${rootName}>${tail}`;
      return cut === undefined || cut % 5 !== 0 ? s : s.slice(0, cut % (s.length + 1));
    });
  let scanned = 0;
  let entries = 0;
  let errors = 0;
  fc.assert(
    fc.property(
      doc,
      fc.integer({ min: 1, max: 8 }),
      fc.constantFrom(undefined, 'application/xml', 'text/xml'),
      (d, max, ct) => {
        const [now, before] = both(d, ct, max);
        assert.deepEqual(now, before, JSON.stringify(d));
        const text = d.charCodeAt(0) === 0xfeff ? d.slice(1) : d;
        if (scanIdListXml(text, max * 4 + 16) !== undefined) scanned++;
        if (Array.isArray(now)) entries++;
        else errors++;
      },
    ),
    { numRuns: 5_000, seed: 20261126 },
  );
  // The generator must reach both paths and both outcomes often.
  assert.ok(scanned > 400, `only ${scanned} documents took the fast path`);
  assert.ok(entries > 1000 && errors > 500, `${entries} lists, ${errors} errors`);
});
