// The accounting formats on their own: APEL summaries grouped per month, user, VO and
// endpoint; VO group/role from FQANs; transfer bytes from statistics lines (malformed
// lines ignored); usage records escape what users control.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { summaries, sync, voGroupRole } from '../../src/accounting/apel.js';
import { transferBytes } from '../../src/accounting/recorder.js';
import { usageRecordXml } from '../../src/accounting/usage-record.js';
import { INDIVIDUAL_HEADER, jobRecord } from '../../src/accounting/apel-individual.js';
import { apelMessage } from '../../src/accounting/apel.js';

const jobRecords = (rs: readonly AccountingRecord[], o: { site: string; machineName: string }): string =>
  apelMessage(
    INDIVIDUAL_HEADER,
    rs.map((r) => jobRecord(r, o)),
  );
import { voOf, type AccountingRecord } from '../../src/accounting/record.js';

const base: AccountingRecord = {
  jobId: 'j1',
  localId: '42',
  endpoint: 'https://ce.example.org/arex',
  queue: 'main',
  owner: '/DC=org/CN=Jane Doe',
  vo: 'atlas',
  fqans: ['/atlas/uk/Role=production/Capability=NULL'],
  localAccount: 'atlas001',
  finalState: 'FINISHED',
  exitCode: 0,
  submittedAt: Date.UTC(2026, 9, 31, 23, 0),
  startedAt: Date.UTC(2026, 9, 31, 23, 10),
  endedAt: Date.UTC(2026, 9, 31, 23, 40),
  wallSeconds: 1800,
  userCpuSeconds: 1700,
  systemCpuSeconds: 50,
  cores: 1,
  nodes: ['n1'],
  maxRssBytes: 1 << 20,
  stageInBytes: 10,
  stageOutBytes: 20,
  runtimeEnvironments: ['ENV/PROXY'],
  recordedAt: Date.UTC(2026, 10, 1),
  jobReported: [],
};

describe('accounting formats', () => {
  it('VO, group and role come from the first FQAN; none without FQANs', () => {
    assert.deepEqual(voGroupRole(base.fqans), { group: '/atlas/uk', role: 'Role=production' });
    assert.deepEqual(voGroupRole(['/cms/Role=NULL/Capability=NULL']), { group: '/cms', role: 'None' });
    assert.deepEqual(voGroupRole([]), { group: 'None', role: 'None' });
    assert.equal(voOf(['/dteam/x']), 'dteam');
    assert.equal(voOf([]), null);
  });

  it('summaries group per month (UTC end time), user and VO, adding wall and CPU time', () => {
    const nov = { ...base, jobId: 'j2', endedAt: Date.UTC(2026, 10, 1, 0, 5) };
    const other = { ...base, jobId: 'j3', owner: '/DC=org/CN=Other', vo: null, fqans: [] };
    const text = summaries([base, { ...base, jobId: 'j4' }, nov, other], { site: 'SITE' });
    // v0.2 is the form with InfrastructureType and ServiceLevelType (v0.3 is the normalised one).
    assert.ok(text.startsWith('APEL-summary-job-message: v0.2\n'), text.split('\n')[0]);
    const records = text.split('%%\n').filter((r) => r.includes('Site:'));
    assert.equal(records.length, 3);
    assert.match(
      records[0]!,
      /Month: 10\nYear: 2026\nGlobalUserName: \/DC=org\/CN=Jane Doe\nVO: atlas\nVOGroup: \/atlas\/uk\nVORole: Role=production/,
    );
    assert.match(records[0]!, /WallDuration: 3600\nCpuDuration: 3500\nNumberOfJobs: 2/);
    assert.match(records[1]!, /Month: 11/);
    assert.match(records[2]!, /VO: None\nVOGroup: None\nVORole: None/);
    assert.doesNotMatch(text, /ServiceLevel/, 'no benchmark given, none invented');
    assert.match(
      sync([base, nov], { site: 'SITE' }),
      /NumberOfJobs: 1\nMonth: 10\nYear: 2026\n%%\nSite: SITE\nSubmitHost: \S+\nNumberOfJobs: 1\nMonth: 11/,
    );
  });

  it('transfer bytes sum the input and output lines; other and malformed lines are ignored', () => {
    const stats = [
      'inputfile:url=https://h/a,size=100,starttime=2026-01-01T00:00:00Z,endtime=2026-01-01T00:00:01Z',
      'inputfile:url=https://h/b,size=5,starttime=x,endtime=y,fromcache=yes',
      'outputfile:url=https://h/c,size=7,starttime=x,endtime=y',
      'inputfile:url=https://h/nosize',
      'garbage size=1000',
      '',
    ].join('\n');
    assert.deepEqual(transferBytes(stats), { in: 105, out: 7 });
    assert.deepEqual(transferBytes(undefined), { in: 0, out: 0 });
  });

  it('a usage record escapes user-controlled text and leaves out what is unknown', () => {
    const xml = usageRecordXml(
      { ...base, owner: '/CN=A & B <x>', queue: 'q"1', localId: null, userCpuSeconds: null, systemCpuSeconds: null },
      { site: 'S', machineName: 'ce' },
    );
    assert.match(xml, /<urf:GlobalUserName>\/CN=A &amp; B &lt;x&gt;<\/urf:GlobalUserName>/);
    assert.match(xml, /<urf:Queue>q&quot;1<\/urf:Queue>/);
    assert.doesNotMatch(xml, /LocalJobId|CpuDuration/);
    assert.match(xml, /<urf:WallDuration>PT1800S<\/urf:WallDuration>/);
    assert.match(xml, /<urf:Status>completed<\/urf:Status>/);
    assert.match(
      usageRecordXml({ ...base, finalState: 'KILLED' }, { site: 'S', machineName: 'ce' }),
      /<urf:Status>aborted<\/urf:Status>/,
    );
  });

  it('a line break or other control character in a VO attribute or owner cannot add fields to an APEL record or break a usage record', () => {
    // FQANs come from attribute certificates or a token's wlcg.groups, the owner from a
    // certificate or token: none of it may start a line `Site: ...` or end a record (`%%`).
    const evil = {
      ...base,
      owner: '/CN=Eve\nSite: FORGED',
      vo: 'atlas',
      fqans: ['/atlas/x\nSite: FORGED\n%%\nSite: FORGED2/Role=r\r\u0000'],
    };
    const o = { site: 'SITE', machineName: 'ce.example.org' };
    for (const text of [summaries([evil], o), jobRecords([evil], o)]) {
      const lines = text.split('\n');
      assert.deepEqual(
        lines.filter((l) => l.startsWith('Site:')),
        ['Site: SITE'],
        text,
      );
      assert.equal(lines.filter((l) => l === '%%').length, 1, text);
      assert.doesNotMatch(text, /[\r\0]/);
    }
    const xml = usageRecordXml(evil, o);
    // XML 1.0 allows no control character but tab, line feed and carriage return.
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(xml, /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
  });

  it("a usage record's VO lists the FQANs of that VO only (a proxy of two VOs records both, the first primary)", () => {
    const xml = usageRecordXml(
      { ...base, fqans: ['/atlas/Role=NULL/Capability=NULL', '/atlasx/Role=NULL', '/cms/Role=NULL/Capability=NULL'] },
      { site: 'S', machineName: 'ce' },
    );
    assert.match(xml, /<vo:Name>atlas<\/vo:Name>/);
    assert.deepEqual(
      [...xml.matchAll(/<vo:Group>([^<]*)<\/vo:Group>/g)].map((m) => m[1]),
      ['/atlas/Role=NULL/Capability=NULL'],
    );
  });

  it('a usage record names the elements only the job reported; none when the batch system measured them all', () => {
    const ur = (r: AccountingRecord): string => usageRecordXml(r, { site: 'S', machineName: 'ce' });
    assert.match(
      ur({ ...base, jobReported: ['exitCode', 'cpuTime', 'maxRss', 'endTime'] }),
      /<urf:Resource urf:description="ReportedByJob">ExitStatus CpuDuration Memory<\/urf:Resource>/,
      "the batch end time is no element of the record (EndTime is the service's): not named",
    );
    assert.doesNotMatch(ur(base), /ReportedByJob/);
    assert.doesNotMatch(ur({ ...base, jobReported: ['endTime'] }), /ReportedByJob/);
  });
});
