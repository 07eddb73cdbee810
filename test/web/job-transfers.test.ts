// The job page's transfer rows from the `statistics` control file (src/api/web/job-transfers.ts):
// sizes, times and rates as a person reads them; URLs with commas; lines that are not
// transfers skipped; HTML in a URL shown as text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseStatistics, transfersSection } from '../../src/api/web/job-transfers.js';

describe('the transfers of the job page', () => {
  it('reads inputs and outputs with size, whole seconds and the cache flag, a URL with commas whole', () => {
    const t = parseStatistics(
      [
        'inputfile:url=root://se.example.org//data/a,b.bin,size=2097152,starttime=2026-12-02T07:00:00Z,endtime=2026-12-02T07:00:04Z',
        'inputfile:url=https://se.example.org/c,size=10,starttime=2026-12-02T07:00:00Z,endtime=2026-12-02T07:00:00Z,fromcache=yes',
        'outputfile:url=root://se.example.org//data/o,size=0,starttime=2026-12-02T07:01:00Z,endtime=2026-12-02T07:01:00Z',
      ].join('\n'),
    );
    assert.deepEqual(t, [
      { direction: 'in', url: 'root://se.example.org//data/a,b.bin', bytes: 2097152, seconds: 4, fromCache: false },
      { direction: 'in', url: 'https://se.example.org/c', bytes: 10, seconds: 0, fromCache: true },
      { direction: 'out', url: 'root://se.example.org//data/o', bytes: 0, seconds: 0, fromCache: false },
    ]);
    const page = transfersSection(t).toString();
    assert.match(page, /2097152 bytes \(2\.0 MiB\)/);
    assert.match(page, /512\.0 KiB\/s/, '2 MiB in 4 s');
    assert.match(page, /from the cache/);
    assert.match(page, /In: 2097162 bytes \(2\.0 MiB\); out: 0 bytes/);
  });

  it('gives a lower bound for a transfer inside one second, none for an empty file', () => {
    const [fast] = parseStatistics(
      'inputfile:url=root://h//f,size=300000,starttime=2026-12-02T07:00:00Z,endtime=2026-12-02T07:00:00Z',
    );
    const page = transfersSection(fast === undefined ? [] : [fast]).toString();
    assert.match(page, /under 1 s/);
    assert.match(page, /at least 293\.0 KiB\/s/);
  });

  it('skips lines that are not transfers and shows a URL as text, never as markup', () => {
    const t = parseStatistics(
      [
        'garbage',
        'inputfile:url=x,size=-1,starttime=2026-12-02T07:00:00Z,endtime=2026-12-02T07:00:00Z',
        'inputfile:url=https://h/<script>alert(1)</script>,size=1,starttime=2026-12-02T07:00:00Z,endtime=2026-12-02T07:00:01Z',
        '',
      ].join('\n'),
    );
    assert.equal(t.length, 1);
    const page = transfersSection(t).toString();
    assert.doesNotMatch(page, /<script>/);
    assert.match(page, /&lt;script&gt;/);
  });

  it('says so when nothing was recorded (no file, or an empty one)', () => {
    assert.deepEqual(parseStatistics(undefined), []);
    assert.match(transfersSection([]).toString(), /None recorded/);
  });
});
