import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boolText, bytesToGb, bytesToMb, countText, glueTime, intText, nonEmpty } from '../../src/info/glue2-values.js';
import { splitRteName } from '../../src/info/rte-name.js';

/** pyarcrest's `%Y-%m-%dT%H:%M:%SZ`: no fraction, no offset. */
const PY_FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

test('glueTime formats a Date in UTC without fraction', () => {
  assert.equal(glueTime(new Date('2026-11-21T22:19:14.999Z')), '2026-11-21T22:19:14Z');
  assert.equal(glueTime(new Date('2026-01-02T03:04:05+02:00')), '2026-01-02T01:04:05Z');
  assert.match(glueTime(new Date()) ?? '', PY_FORMAT);
});

test('glueTime takes epoch seconds (what the job store keeps), fractions truncated', () => {
  assert.equal(glueTime(0), '1970-01-01T00:00:00Z');
  assert.equal(glueTime(Date.parse('2036-11-18T22:07:46Z') / 1000 + 0.9), '2036-11-18T22:07:46Z');
});

test('glueTime: unknown or unusable times are undefined, never garbage', () => {
  assert.equal(glueTime(undefined), undefined);
  assert.equal(glueTime(new Date('not a date')), undefined);
  assert.equal(glueTime(Number.NaN), undefined);
  assert.equal(glueTime(Number.POSITIVE_INFINITY), undefined);
  // Years past 9999 serialise as +010000-..., which is not a GLUE2 time.
  assert.equal(glueTime(new Date('+010000-01-01T00:00:00Z')), undefined);
  assert.equal(glueTime(1e15), undefined);
});

test('intText truncates and rejects non-finite numbers; keeps negatives (exit codes)', () => {
  assert.equal(intText(3), '3');
  assert.equal(intText(-1), '-1');
  assert.equal(intText(2.9), '2');
  assert.equal(intText(Number.NaN), undefined);
  assert.equal(intText(Number.NEGATIVE_INFINITY), undefined);
  assert.equal(intText(undefined), undefined);
});

test('countText treats negative counts as unknown', () => {
  assert.equal(countText(0), '0');
  assert.equal(countText(10800), '10800');
  assert.equal(countText(-5), undefined);
  assert.equal(countText(Number.NaN), undefined);
});

test('bytesToMb / bytesToGb round down; invalid sizes are unknown', () => {
  assert.equal(bytesToMb(4 * 1024 ** 3), 4096);
  assert.equal(bytesToMb(1024 ** 2 - 1), 0);
  assert.equal(bytesToGb(252 * 1024 ** 3 + 123), 252);
  assert.equal(bytesToGb(-1), undefined);
  assert.equal(bytesToMb(Number.NaN), undefined);
  assert.equal(bytesToMb(undefined), undefined);
});

test('boolText and nonEmpty', () => {
  assert.equal(boolText(true), 'true');
  assert.equal(boolText(false), 'false');
  assert.equal(boolText(undefined), undefined);
  assert.equal(nonEmpty('  '), undefined);
  assert.equal(nonEmpty(''), undefined);
  assert.equal(nonEmpty(' x '), ' x ');
});

test('splitRteName splits at the first dash followed by a digit, losslessly', () => {
  const cases: Array<[string, string, string | undefined]> = [
    ['APPS/FOO-1.0', 'APPS/FOO', '1.0'],
    ['ENV/PROXY', 'ENV/PROXY', undefined],
    ['APPS/HEP/ATLAS-SITE', 'APPS/HEP/ATLAS-SITE', undefined],
    ['APPS/HEP/ATLAS-SITE-21.0.1-x86', 'APPS/HEP/ATLAS-SITE', '21.0.1-x86'],
    ['A-B-2', 'A-B', '2'],
    ['-1.0', '-1.0', undefined],
    ['PY-', 'PY-', undefined],
  ];
  for (const [name, appName, appVersion] of cases) {
    const r = splitRteName(name);
    assert.equal(r.appName, appName, name);
    assert.equal(r.appVersion, appVersion, name);
    // pyarcrest rebuilds the RTE name as AppName[-AppVersion].
    assert.equal(r.appVersion === undefined ? r.appName : `${r.appName}-${r.appVersion}`, name);
  }
});
