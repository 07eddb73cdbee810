import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseVersion, parseVersionList } from '../../bench/harness/versions.js';
import { BenchError } from '../../bench/harness/failures.js';

const notArc = (re: RegExp) => (e: unknown) => e instanceof BenchError && e.kind === 'not-arc' && re.test(e.message);

test('ARC 6 JSON: a single version as a plain string', () => {
  assert.deepEqual(parseVersionList('{"version":"1.0"}', 'application/json'), ['1.0']);
  assert.equal(chooseVersion(['1.0']), '1.0');
});

test('JSON array, in any order: the highest known version is chosen', () => {
  const v = parseVersionList('{"version":["1.0","1.1"]}', 'application/json; charset=utf-8');
  assert.deepEqual(v, ['1.0', '1.1']);
  assert.equal(chooseVersion(v), '1.1');
  assert.equal(chooseVersion(['1.1', '1.0']), '1.1');
});

test('JSON without a content-type and with a wrapping object', () => {
  assert.deepEqual(parseVersionList(' {"versions":{"version":["1.0"]}} ', undefined), ['1.0']);
});

test('XML version list, as A-REX pretty-prints it', () => {
  const xml = '<versions>\n  <version>1.0</version>\n  <version>1.1</version>\n</versions>\n';
  assert.deepEqual(parseVersionList(xml, 'application/xml'), ['1.0', '1.1']);
});

test('versions the harness does not speak are skipped; none usable is an error', () => {
  assert.equal(chooseVersion(['1.0', '2.0']), '1.0');
  assert.equal(chooseVersion(['1.1', '9.9']), '1.1');
  assert.throws(() => chooseVersion(['2.0']), notArc(/offers interface versions 2\.0/));
  assert.throws(() => chooseVersion([]), notArc(/\(none\)/));
});

test('numeric, not lexical, comparison of versions', () => {
  assert.equal(chooseVersion(['1.10', '1.9'], ['1.9', '1.10']), '1.10');
});

test('things that are not a version list', () => {
  assert.throws(() => parseVersionList('', 'application/json'), notArc(/empty body/));
  assert.throws(() => parseVersionList('<html><body>Welcome</body></html>', 'text/html'), notArc(/text\/html/));
  assert.throws(() => parseVersionList('{"status":"ok"}', 'application/json'), notArc(/not an ARC REST version list/));
  assert.throws(() => parseVersionList('{"version":"one"}', 'application/json'), notArc(/version list/));
  assert.throws(() => parseVersionList('{"version":[1.0]}', 'application/json'), notArc(/version list/));
  assert.throws(() => parseVersionList('{not json', 'application/json'), notArc(/version list/));
  assert.throws(
    () => parseVersionList('<versions><version>latest</version></versions>', 'application/xml'),
    notArc(/version list/),
  );
  assert.throws(() => parseVersionList('<jobs/>', 'application/xml'), notArc(/version list/));
  assert.throws(() => parseVersionList('Not Found', 'text/plain'), notArc(/Not Found/));
});
