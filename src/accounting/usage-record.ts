/**
 * One OGF Usage Record (UR 1.0, GFD.98, namespace urf 2003/09) per job run, as XML, with
 * the VO attributes in the SGAS extension many repositories accept. Durations are
 * xsd:duration, times xsd:dateTime in UTC. Figures only the job reported (record.ts) are
 * named in a `Resource` with the description `ReportedByJob` (UR 1.0's extension point).
 */
import type { AccountingRecord } from './record.js';
import { oneLineValue } from './apel.js';
import type { UsageFigure } from '../vocabulary/usage-figures.js';

const URF = 'http://schema.ogf.org/urf/2003/09/urf';
const VO = 'http://www.sgas.se/namespaces/2009/05/ur/vo';

function esc(s: string): string {
  // Control characters (which XML 1.0 refuses but for tab and line breaks, and which a
  // record's one-value fields should not hold) as `\xHH`, as in the APEL records.
  return oneLineValue(s).replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!,
  );
}

/** The record's elements that carry each figure of the vocabulary (the batch end time is not one: EndTime is the service's). */
const UR_ELEMENTS: Readonly<Record<UsageFigure, string | undefined>> = {
  exitCode: 'ExitStatus',
  wallTime: 'WallDuration',
  cpuTime: 'CpuDuration',
  maxRss: 'Memory',
  startTime: 'StartTime',
  endTime: undefined,
  nodes: 'Host',
};

/** `ExitStatus CpuDuration Memory`: the elements whose values only the job reported; null when none. */
function reportedByJob(r: AccountingRecord): string | null {
  const names = r.jobReported.map((f) => UR_ELEMENTS[f]).filter((n): n is string => n !== undefined);
  return names.length > 0 ? names.join(' ') : null;
}

const dur = (s: number): string => `PT${Math.round(s)}S`;
const time = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function usageRecordXml(r: AccountingRecord, o: { site: string; machineName: string }): string {
  const el = (name: string, value: string | number | null | undefined, attrs = ''): string =>
    value === null || value === undefined ? '' : `  <urf:${name}${attrs}>${esc(String(value))}</urf:${name}>\n`;
  const status = r.finalState === 'FINISHED' ? 'completed' : r.finalState === 'KILLED' ? 'aborted' : 'failed';
  const globalJobId = `${r.endpoint.replace(/\/+$/, '')}/rest/1.0/jobs/${r.jobId}`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<urf:UsageRecord xmlns:urf="${URF}" xmlns:vo="${VO}">\n` +
    `  <urf:RecordIdentity urf:recordId="${esc(`${o.machineName}:${r.jobId}:${r.endedAt}`)}" urf:createTime="${time(r.recordedAt)}"/>\n` +
    '  <urf:JobIdentity>\n' +
    `    <urf:GlobalJobId>${esc(globalJobId)}</urf:GlobalJobId>\n` +
    (r.localId !== null ? `    <urf:LocalJobId>${esc(r.localId)}</urf:LocalJobId>\n` : '') +
    '  </urf:JobIdentity>\n' +
    '  <urf:UserIdentity>\n' +
    (r.localAccount !== null ? `    <urf:LocalUserId>${esc(r.localAccount)}</urf:LocalUserId>\n` : '') +
    `    <urf:GlobalUserName>${esc(r.owner)}</urf:GlobalUserName>\n` +
    (r.vo !== null
      ? `    <vo:VO vo:type="voms">\n      <vo:Name>${esc(r.vo)}</vo:Name>\n${fqansOfVo(r.fqans, r.vo)
          .map((f) => `      <vo:Attribute><vo:Group>${esc(f)}</vo:Group></vo:Attribute>\n`)
          .join('')}    </vo:VO>\n`
      : '') +
    '  </urf:UserIdentity>\n' +
    el('Status', status) +
    el('ExitStatus', r.exitCode) +
    el('WallDuration', r.wallSeconds === null ? null : dur(r.wallSeconds)) +
    el('CpuDuration', r.userCpuSeconds === null ? null : dur(r.userCpuSeconds), ' urf:usageType="user"') +
    el('CpuDuration', r.systemCpuSeconds === null ? null : dur(r.systemCpuSeconds), ' urf:usageType="system"') +
    el('StartTime', r.startedAt === null ? null : time(r.startedAt)) +
    el('EndTime', time(r.endedAt)) +
    el('MachineName', o.machineName) +
    el('SubmitHost', r.endpoint) +
    el('Queue', r.queue) +
    el('Site', o.site) +
    el('NodeCount', Math.max(1, r.nodes.length)) +
    el('Processors', r.cores) +
    r.nodes.map((n) => el('Host', n)).join('') +
    el(
      'Memory',
      r.maxRssBytes === null ? null : Math.ceil(r.maxRssBytes / 1024),
      ' urf:storageUnit="KB" urf:metric="max" urf:type="physical"',
    ) +
    el('Network', r.stageInBytes, ' urf:storageUnit="B" urf:metric="total" urf:description="stage-in"') +
    el('Network', r.stageOutBytes, ' urf:storageUnit="B" urf:metric="total" urf:description="stage-out"') +
    r.runtimeEnvironments.map((e) => el('Resource', e, ' urf:description="RuntimeEnvironment"')).join('') +
    el('Resource', reportedByJob(r), ' urf:description="ReportedByJob"') +
    '</urf:UsageRecord>\n'
  );
}

/**
 * The FQANs of one VO: a proxy with ACs of several VOs records all their FQANs (the
 * primary VO's first), and a VO element lists only its own.
 */
function fqansOfVo(fqans: readonly string[], vo: string): string[] {
  return fqans.filter((f) => f === `/${vo}` || f.startsWith(`/${vo}/`));
}
