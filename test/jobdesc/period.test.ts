import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseArcTime } from '../../src/jobdesc/arc-time.js';
import { parsePeriod } from '../../src/jobdesc/period.js';

describe('parsePeriod (ARC durations)', () => {
  it('takes a bare number in the default unit', () => {
    assert.equal(parsePeriod('120', 1), 120);
    assert.equal(parsePeriod(' 120 ', 60), 7200);
  });

  it('reads units by the first letter of the word, with or without spaces', () => {
    assert.equal(parsePeriod('1 hour', 1), 3600);
    assert.equal(parsePeriod('10 minutes', 1), 600);
    assert.equal(parsePeriod('2 days', 1), 172800);
    assert.equal(parsePeriod('1w', 1), 604800);
    assert.equal(parsePeriod('30s', 60), 30);
    assert.equal(parsePeriod('1H 2M 3S', 1), 3723);
  });

  it('gives a trailing bare number the next smaller unit', () => {
    assert.equal(parsePeriod('1h30', 1), 5400);
    assert.equal(parsePeriod('1d2', 1), 86400 + 7200);
    assert.equal(parsePeriod('1w2', 1), 7 * 86400 + 2 * 86400);
    assert.equal(parsePeriod('5m10', 60), 310);
    assert.equal(parsePeriod('5s10', 60), 5 + 600);
  });

  it('ignores words not preceded by a number', () => {
    assert.equal(parsePeriod('about 5 hours', 1), 18000);
  });

  it('reads ISO 8601 durations', () => {
    assert.equal(parsePeriod('PT1H', 1), 3600);
    assert.equal(parsePeriod('P1DT2H3M4S', 1), 86400 + 7200 + 180 + 4);
    assert.equal(parsePeriod('P1Y', 1), 365 * 86400);
    assert.equal(parsePeriod('P1M', 1), 30 * 86400);
    assert.equal(parsePeriod('P2W', 1), 14 * 86400);
    assert.equal(parsePeriod('P1D30M', 1), 86400 + 1800, 'M after D is minutes');
  });

  it('refuses what A-REX would silently read as 0', () => {
    for (const bad of [
      '1:30',
      '1.5h',
      '1,5',
      '5 x',
      '-5',
      'P',
      'PT',
      'P1X',
      'P1H2',
      'P1.5H',
      'PT1Y',
      'P1DT1D',
      '',
      '   ',
      'abc',
      '1 2',
      `${'9'.repeat(16)}`,
      'x'.repeat(300),
    ]) {
      assert.equal(parsePeriod(bad, 1), undefined, bad);
    }
  });

  it('refuses absurdly large values', () => {
    assert.equal(parsePeriod('999999999999999w', 1), undefined);
  });
});

describe('parseArcTime', () => {
  it('normalises the accepted forms to ISO 8601 UTC', () => {
    assert.equal(parseArcTime('2024-05-01T12:00:00Z'), '2024-05-01T12:00:00.000Z');
    assert.equal(parseArcTime('2024-05-01 12:00:00'), '2024-05-01T12:00:00.000Z');
    assert.equal(parseArcTime('2024-05-01T14:00:00+02:00'), '2024-05-01T12:00:00.000Z');
    assert.equal(parseArcTime('2024-05-01T10:30-0130'), '2024-05-01T12:00:00.000Z');
    assert.equal(parseArcTime('2024-05-01'), '2024-05-01T00:00:00.000Z');
    assert.equal(parseArcTime('20240501120000Z'), '2024-05-01T12:00:00.000Z');
    assert.equal(parseArcTime('2024-05-01T12:00:00.250Z'), '2024-05-01T12:00:00.250Z');
    assert.equal(parseArcTime('0050-01-01'), '0050-01-01T00:00:00.000Z');
    assert.equal(parseArcTime('2024-02-29'), '2024-02-29T00:00:00.000Z');
  });

  it('refuses impossible or malformed times', () => {
    for (const bad of [
      '2024-04-31',
      '2023-02-29',
      '2024-13-01',
      '2024-05-01T24:00:00Z',
      '2024-05-01T12:61',
      'tomorrow',
      '1714564800',
      '2024-05-01T12:00:00+25:00',
      '',
      `2024-05-01${'0'.repeat(100)}`,
    ]) {
      assert.equal(parseArcTime(bad), undefined, bad);
    }
  });
});
