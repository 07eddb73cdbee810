import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createdIds, parseBulk, parseJobList, tallyText } from '../../bench/harness/answers.js';
import { BenchError } from '../../bench/harness/failures.js';

test('bulk answer with an array of items (string status codes, as A-REX sends them)', () => {
  const items = parseBulk(
    '{"job":[{"status-code":"201","reason":"Created","id":"a","state":"ACCEPTING"},{"status-code":"500","reason":"No job description parser"}]}',
  );
  assert.deepEqual(items, [
    { status: 201, reason: 'Created', id: 'a', state: 'ACCEPTING' },
    { status: 500, reason: 'No job description parser' },
  ]);
});

test('a single item comes as an object; numeric status codes too', () => {
  assert.deepEqual(parseBulk('{"job":{"status-code":200,"reason":"OK","id":"x","state":"FINISHED"}}'), [
    { status: 200, reason: 'OK', id: 'x', state: 'FINISHED' },
  ]);
});

test('an empty collection is an empty body, or an object without job', () => {
  assert.deepEqual(parseBulk(''), []);
  assert.deepEqual(parseBulk('  \n'), []);
  assert.deepEqual(parseBulk('{}'), []);
  assert.deepEqual(parseJobList(''), []);
});

test('a non-JSON answer is a not-arc error naming what was read', () => {
  assert.throws(
    () => parseBulk('<jobs/>', 'status answer'),
    (e: unknown) =>
      e instanceof BenchError && e.kind === 'not-arc' && /status answer: the answer is not JSON/.test(e.message),
  );
  assert.throws(
    () => parseBulk('[1,2]'),
    (e: unknown) => e instanceof BenchError && /not a JSON object/.test(e.message),
  );
});

test('missing status code reads as NaN, not as success', () => {
  const [it] = parseBulk('{"job":[{"id":"a"}]}');
  assert.ok(Number.isNaN(it?.status));
  const c = createdIds(parseBulk('{"job":[{"id":"a"}]}'));
  assert.deepEqual(c.ids, []);
  assert.equal(c.failures.get('?'), 1);
});

test('job list: ids with or without state; entries without an id are skipped', () => {
  assert.deepEqual(parseJobList('{"job":[{"id":"a"},{"id":"b","state":"RUNNING"},{"state":"X"},{"id":""}]}'), [
    { id: 'a' },
    { id: 'b', state: 'RUNNING' },
  ]);
  assert.deepEqual(parseJobList('{"job":{"id":"only"}}'), [{ id: 'only' }]);
});

test('createdIds keeps 201s with an id and tallies the rest', () => {
  const items = parseBulk(
    '{"job":[{"status-code":"201","reason":"Created","id":"a"},{"status-code":"201","reason":"Created"},{"status-code":"500","reason":"bad"},{"status-code":"500","reason":"bad"}]}',
  );
  const c = createdIds(items);
  assert.deepEqual(c.ids, ['a']);
  assert.equal(c.failures.get('500 bad'), 2);
  assert.equal(c.failures.get('201 Created'), 1);
  assert.equal(tallyText(c.failures), '2 x 500 bad; 1 x 201 Created');
});

test('tallyText shows the most frequent reasons first and cuts the list', () => {
  const t = new Map([
    ['a', 1],
    ['b', 5],
    ['c', 3],
    ['d', 2],
  ]);
  assert.equal(tallyText(t, 2), '5 x b; 3 x c; ...');
});
