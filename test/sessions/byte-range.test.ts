import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseContentRange, parseRange } from '../../src/sessions/byte-range.js';
import { isCeError } from '../../src/errors/ce-error.js';

describe('Range (GET)', () => {
  it('no header is the full content', () => {
    assert.deepEqual(parseRange(undefined, 10), { kind: 'full' });
  });

  it('a-b, a- and the suffix -n', () => {
    assert.deepEqual(parseRange('bytes=1-3', 6), { kind: 'partial', start: 1, end: 3 });
    assert.deepEqual(parseRange('bytes=2-', 6), { kind: 'partial', start: 2, end: 5 });
    assert.deepEqual(parseRange('bytes=-2', 6), { kind: 'partial', start: 4, end: 5 });
    assert.deepEqual(parseRange('Bytes = 0 - 0', 6), { kind: 'partial', start: 0, end: 0 });
  });

  it('clamps an end beyond the file and a suffix longer than the file', () => {
    assert.deepEqual(parseRange('bytes=4-100', 6), { kind: 'partial', start: 4, end: 5 });
    assert.deepEqual(parseRange('bytes=-100', 6), { kind: 'partial', start: 0, end: 5 });
    assert.deepEqual(parseRange('bytes=0-99999999999999999999', 6), { kind: 'partial', start: 0, end: 5 });
  });

  it('a start at or past the end, a zero suffix, any range of an empty file: unsatisfiable', () => {
    assert.deepEqual(parseRange('bytes=6-', 6), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=6-10', 6), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=99999999999999999999-', 6), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=-0', 6), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=0-', 0), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=-5', 0), { kind: 'unsatisfiable' });
  });

  it('ignores (full content) what it does not serve: other units, several ranges, malformed or inverted specs', () => {
    for (const h of [
      'items=0-1',
      'bytes=0-1,3-4',
      'bytes=abc',
      'bytes=1-x',
      'bytes=-',
      'bytes=',
      'bytes=5-2',
      'bytes 0-1',
      '',
      'bytes=--1',
      'bytes=1.5-2',
    ]) {
      assert.deepEqual(parseRange(h, 6), { kind: 'full' }, h);
    }
  });
});

describe('Content-Range (PUT)', () => {
  it('parses bytes a-b/total and bytes a-b/*', () => {
    assert.deepEqual(parseContentRange('bytes 4-7/20'), { start: 4, end: 7, total: 20 });
    assert.deepEqual(parseContentRange('bytes 0-0/1'), { start: 0, end: 0, total: 1 });
    assert.deepEqual(parseContentRange('bytes 30-33/*'), { start: 30, end: 33, total: undefined });
  });

  const bad = (h: string, why: RegExp) =>
    assert.throws(
      () => parseContentRange(h),
      (e: unknown) =>
        isCeError(e) && e.code === 'CE_ERR_SESSION_BAD_CONTENT_RANGE' && e.statusCode === 400 && why.test(e.message),
      h,
    );

  it('refuses an end before the start', () => bad('bytes 7-4/20', /before the first/));
  it('refuses a range ending at or beyond the total', () => {
    bad('bytes 4-20/20', /beyond the total/);
    bad('bytes 0-0/0', /beyond the total/);
  });
  it('refuses non-numeric, negative, fractional and missing parts', () => {
    for (const h of [
      'bytes a-b/10',
      'bytes 1-2/x',
      'bytes -1-2/10',
      'bytes 1.5-2/10',
      'bytes 1-/10',
      'bytes -2/10',
      'bytes 1-2',
      'bytes */10',
      '1-2/10',
      'items 1-2/10',
      '',
      'bytes 1-2/10, bytes 3-4/10',
    ]) {
      bad(h, /expected bytes/);
    }
  });
  it('refuses numbers too large to be exact', () =>
    bad('bytes 0-12345678901234567/99999999999999999', /expected bytes/));
});
