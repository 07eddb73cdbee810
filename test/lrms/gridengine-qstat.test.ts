// The scanner of the poll's answer, `qstat -u '*' -xml` (src/lrms/gridengine/qstat-xml.ts),
// on real answers of Grid Engine 8.1.9 (./gridengine-qstat-answers.ts: no jobs, array
// tasks, a name with XML entities, s, hqw, ds, dr, Eqw) and on odd or broken ones: a cut
// answer is refused at every length (it would make the jobs after the cut look ended),
// markup in a job name stays a name, empty and nested elements, entities.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseQstatXml, unescapeXml, type GeJob } from '../../src/lrms/gridengine/qstat-xml.js';
import { pickLost } from '../../src/lrms/gridengine/submission.js';
import { QSTAT_DELETING, QSTAT_EMPTY, QSTAT_EQW, QSTAT_MIXED } from './gridengine-qstat-answers.js';

const brief = (jobs: Map<string, GeJob>): string[] =>
  [...jobs.values()].map((j) => `${j.id} ${j.state} ${j.queue} ${j.name}`);

/** A document of Grid Engine's shape around the given job_list bodies. */
const doc = (...bodies: string[]): string =>
  `<?xml version='1.0'?>\n<job_info  xmlns:xsd="x">\n  <queue_info>\n  </queue_info>\n  <job_info>\n${bodies
    .map((b) => `    <job_list state="pending">\n${b}\n    </job_list>\n`)
    .join('')}  </job_info>\n</job_info>\n`;

describe('qstat -xml scanner', () => {
  it('no jobs: an empty map, not a failure', () => {
    assert.equal(parseQstatXml(QSTAT_EMPTY).size, 0);
  });

  it('reads every job of a real answer: states, queues, names with entities, array tasks once', () => {
    assert.deepEqual(brief(parseQstatXml(QSTAT_MIXED)), [
      '1 s all.q@localhost run1',
      // Grid Engine writes < as "%lt;" (kept as written) and the rest as entities.
      `2 r all.q@localhost a&b%lt;c>"d'e`,
      // Tasks 1 and 2 run, 3-5 wait: one number, the first entry kept.
      '3 r all.q@localhost arr',
      '5 qw  eqw',
      '4 hqw  held',
    ]);
  });

  it('reads a deletion under way (ds, dr) and an error state (Eqw)', () => {
    assert.deepEqual(
      brief(parseQstatXml(QSTAT_DELETING)).map((l) => l.split(' ').slice(0, 2).join(' ')),
      ['1 ds', '2 r', '3 dr', '5 qw', '4 hqw'],
    );
    assert.deepEqual(brief(parseQstatXml(QSTAT_EQW)), [
      '1 ds all.q@localhost run1',
      `2 r all.q@localhost a&b%lt;c>"d'e`,
      '5 Eqw  eqw',
      '4 hqw  held',
    ]);
  });

  it('refuses an answer cut at any length: never fewer jobs than it holds', () => {
    const whole = parseQstatXml(QSTAT_MIXED).size;
    for (let n = 0; n < QSTAT_MIXED.length; n++) {
      let got: number | undefined;
      try {
        got = parseQstatXml(QSTAT_MIXED.slice(0, n)).size;
      } catch {
        continue;
      }
      // Only a cut right after the last list's own end keeps everything; nothing else passes.
      assert.equal(got, whole, `cut at ${n}: ${JSON.stringify(QSTAT_MIXED.slice(n - 30, n))}`);
    }
  });

  it('refuses what is not qstat XML: an error message, an empty answer, another root', () => {
    for (const bad of ['', 'error: commlib error: got select error (Connection refused)', '<job_infos></job_infos>'])
      assert.throws(() => parseQstatXml(bad), /job_info/, JSON.stringify(bad));
    assert.throws(() => parseQstatXml(doc('<JB_job_number>1</JB_job_number><state>qw</state').slice(0, -20)), /cut/);
  });

  it('markup written into a job name stays the name (Grid Engine escapes it)', () => {
    // A user's job named "</JB_name><JB_job_number>99</JB_job_number><JB_name>x", as qstat writes it.
    const name = '%lt;/JB_name&gt;%lt;JB_job_number&gt;99%lt;/JB_job_number&gt;';
    const jobs = parseQstatXml(doc(`<JB_job_number>7</JB_job_number><JB_name>${name}</JB_name><state>qw</state>`));
    assert.deepEqual([...jobs.keys()], ['7']);
    assert.equal(jobs.get('7')?.name, '%lt;/JB_name>%lt;JB_job_number>99%lt;/JB_job_number>');
  });

  it('skips a job_list without a number or a state; takes the first of a repeated field', () => {
    const jobs = parseQstatXml(
      doc(
        '<JB_job_number>1</JB_job_number><state/>',
        '<JB_name>no number</JB_name><state>qw</state>',
        '<JB_job_number>3</JB_job_number><state>r</state><state>qw</state><queue_name/>',
        // A field with children is not the field; an element whose name only begins like one is another.
        '<JB_job_number>4</JB_job_number><state><x>r</x></state><stately>q</stately><state>hqw</state>',
      ),
    );
    assert.deepEqual(brief(jobs), ['3 r  ', '4 hqw  ']);
  });

  it('a self-closed job_list or another element named job_list… is not a job', () => {
    const xml = doc('<JB_job_number>1</JB_job_number><state>qw</state>').replace(
      '  <job_info>\n',
      '  <job_info>\n<job_list/>\n<job_listing><JB_job_number>9</JB_job_number><state>r</state></job_listing>\n',
    );
    assert.deepEqual([...parseQstatXml(xml).keys()], ['1']);
  });

  it('decodes the five entities and character references; leaves unknown ones and bad code points', () => {
    assert.equal(unescapeXml('a&lt;b&gt;c&amp;d&quot;e&apos;f'), `a<b>c&d"e'f`);
    assert.equal(unescapeXml('&#65;&#x42;&#x1F600;'), 'AB\u{1F600}');
    assert.equal(unescapeXml('&nbsp;&#0;&#x110000;&amp'), '&nbsp;&#0;&#x110000;&amp');
    assert.equal(unescapeXml('&amp;lt;'), '&lt;', 'decoded once');
  });

  it('reads 20,000 jobs of the poll at scale, each once', () => {
    const body = (i: number): string =>
      `<JB_job_number>${i}</JB_job_number><JAT_prio>0.5</JAT_prio><JB_name>ceres-j${i}-0123456789ab</JB_name>` +
      `<JB_owner>u</JB_owner><state>qw</state><JB_submission_time>2026-12-02T15:24:29</JB_submission_time>` +
      `<queue_name></queue_name><slots>1</slots>`;
    const jobs = parseQstatXml(doc(...Array.from({ length: 20_000 }, (_, i) => body(i + 1))));
    assert.equal(jobs.size, 20_000);
    assert.deepEqual(jobs.get('20000'), {
      id: '20000',
      state: 'qw',
      queue: '',
      name: 'ceres-j20000-0123456789ab',
      owner: 'u',
    });
  });
});

// A submission whose qsub answer was lost is found again by its job's name or the number
// the job wrote when it started (src/lrms/gridengine/submission.ts). Any local user can
// submit a job under a name it guessed, and the job's own account writes that number: a
// job of another account must never be adopted (Ceres would follow, account and qdel it).
describe('a lost submission is adopted only from its own account', () => {
  const named = (id: string, name: string, owner: string): string =>
    `      <JB_job_number>${id}</JB_job_number>\n      <JB_name>${name}</JB_name>\n      <JB_owner>${owner}</JB_owner>\n      <state>qw</state>`;

  it('reads each job owner', () => {
    assert.deepEqual(
      [...parseQstatXml(QSTAT_MIXED).values()].map((j) => j.owner),
      ['root', 'root', 'root', 'root', 'root'],
    );
  });

  it('a job of the same name planted by another account is not taken; the own one is', () => {
    const jobs = parseQstatXml(doc(named('7', 'ceres-abc-1', 'mallory'), named('9', 'ceres-abc-1', 'grid001')));
    assert.equal(pickLost(jobs, 'ceres-abc-1', 'grid001', undefined), '9');
    assert.equal(
      pickLost(parseQstatXml(doc(named('7', 'ceres-abc-1', 'mallory'))), 'ceres-abc-1', 'grid001', undefined),
      undefined,
    );
  });

  it('a started number that names another account job is passed over for the name', () => {
    const jobs = parseQstatXml(doc(named('7', 'other', 'alice'), named('9', 'ceres-abc-1', 'grid001')));
    assert.equal(pickLost(jobs, 'ceres-abc-1', 'grid001', '7'), '9');
    assert.equal(pickLost(jobs, 'ceres-abc-1', 'grid002', '7'), undefined);
    // Its own, listed or ended (no longer listed), is taken.
    assert.equal(pickLost(jobs, 'x', 'grid001', '9'), '9');
    assert.equal(pickLost(jobs, 'x', 'grid001', '12'), '12');
  });
});
