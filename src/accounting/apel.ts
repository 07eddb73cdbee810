/**
 * APEL summary and sync messages (the text format the APEL client hands to SSM): one
 * summary per month, user, VO (group and role), endpoint, node count and processor
 * count; records separated by `%%`. The site's publisher sends the files; Ceres only
 * writes them.
 */
import type { AccountingRecord } from './record.js';

export interface ApelOptions {
  readonly site: string;
  /** Benchmark published as ServiceLevel (e.g. HEPscore23 and the per-core value); absent: none written. */
  readonly benchmark?: { readonly type: string; readonly value: number };
}

interface GroupKey {
  readonly Month: number;
  readonly Year: number;
  readonly GlobalUserName: string;
  readonly VO: string;
  readonly VOGroup: string;
  readonly VORole: string;
  readonly SubmitHost: string;
  readonly NodeCount: number;
  readonly Processors: number;
}

interface Group {
  readonly key: GroupKey;
  earliest: number;
  latest: number;
  wall: number;
  cpu: number;
  jobs: number;
}

/** VOGroup and VORole of the first FQAN: `/atlas/uk/Role=production` → `/atlas/uk`, `Role=production`. */
export function voGroupRole(fqans: readonly string[]): { group: string; role: string } {
  const f = fqans[0];
  if (f === undefined) return { group: 'None', role: 'None' };
  const parts = f.split('/').filter((p) => p !== '');
  const groups = parts.filter((p) => !p.includes('='));
  const role = parts.find((p) => p.startsWith('Role=') && p !== 'Role=NULL');
  return { group: `/${groups.join('/')}`, role: role ?? 'None' };
}

/** The first line of a summary message: the v0.2 fields (InfrastructureType, ServiceLevelType; v0.3 is the normalised form). */
export const SUMMARY_HEADER = 'APEL-summary-job-message: v0.2';
export const SYNC_HEADER = 'APEL-sync-message: v0.1';

/** A message: its header line, then each record's lines ending with `%%`. */
export function apelMessage(header: string, records: readonly string[]): string {
  return `${[header, ...records].join('\n')}\n`;
}

/** One record of a message: `Name: value` lines and the closing `%%`. */
export function apelRecord(fields: readonly (readonly [string, string | number])[]): string {
  return [...fields.map(([k, v]) => `${k}: ${oneLineValue(String(v))}`), '%%'].join('\n');
}

/**
 * A value on its one line: control characters (and the Unicode line separators) as
 * `\xHH`, as the one-line form of a DN writes them. FQANs (attribute certificates, a
 * token's wlcg.groups) and owners reach the records, and a line break in one would start
 * fields of its choosing (`Site:`, `%%`) in a message the site signs and sends.
 */
export function oneLineValue(v: string): string {
  return v.replace(
    /[\p{Cc}\u2028\u2029]/gu,
    (c) => `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

/** The summary records of `records` (each a block of lines ending with `%%`). */
export function summaryRecords(records: readonly AccountingRecord[], o: ApelOptions): string[] {
  const groups = new Map<string, Group>();
  for (const r of records) {
    const end = new Date(r.endedAt);
    const { group, role } = voGroupRole(r.fqans);
    const key: GroupKey = {
      Month: end.getUTCMonth() + 1,
      Year: end.getUTCFullYear(),
      GlobalUserName: r.owner,
      VO: r.vo ?? 'None',
      VOGroup: group,
      VORole: role,
      SubmitHost: r.endpoint,
      NodeCount: Math.max(1, r.nodes.length),
      Processors: r.cores,
    };
    const k = JSON.stringify(key);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { key, earliest: r.endedAt, latest: r.endedAt, wall: 0, cpu: 0, jobs: 0 }));
    g.earliest = Math.min(g.earliest, r.endedAt);
    g.latest = Math.max(g.latest, r.endedAt);
    // APEL's WallDuration is per job (not times cores); CpuDuration is user + system.
    g.wall += Math.round(r.wallSeconds ?? 0);
    g.cpu += Math.round((r.userCpuSeconds ?? 0) + (r.systemCpuSeconds ?? 0));
    g.jobs += 1;
  }
  return [...groups.values()].map((g) => {
    const k = g.key;
    return apelRecord([
      ['Site', o.site],
      ['Month', k.Month],
      ['Year', k.Year],
      ['GlobalUserName', k.GlobalUserName],
      ['VO', k.VO],
      ['VOGroup', k.VOGroup],
      ['VORole', k.VORole],
      ['SubmitHost', k.SubmitHost],
      ['InfrastructureType', 'grid'],
      ...benchmarkFields(o),
      ['NodeCount', k.NodeCount],
      ['Processors', k.Processors],
      ['EarliestEndTime', Math.floor(g.earliest / 1000)],
      ['LatestEndTime', Math.floor(g.latest / 1000)],
      ['WallDuration', g.wall],
      ['CpuDuration', g.cpu],
      ['NumberOfJobs', g.jobs],
    ]);
  });
}

/** ServiceLevelType and ServiceLevel when a benchmark is configured; nothing is invented otherwise. */
export function benchmarkFields(o: ApelOptions): [string, string | number][] {
  return o.benchmark
    ? [
        ['ServiceLevelType', o.benchmark.type],
        ['ServiceLevel', o.benchmark.value],
      ]
    : [];
}

export function summaries(records: readonly AccountingRecord[], o: ApelOptions): string {
  return apelMessage(SUMMARY_HEADER, summaryRecords(records, o));
}

/** Jobs of one month and endpoint: what a sync record tells. */
export interface MonthCount {
  readonly host: string;
  readonly month: number;
  readonly year: number;
  readonly n: number;
}

/** The sync records: jobs per month and endpoint, so the repository can tell what it is missing. */
export function syncRecords(records: readonly AccountingRecord[], o: ApelOptions): string[] {
  const counts = new Map<string, { host: string; month: number; year: number; n: number }>();
  for (const r of records) {
    const end = new Date(r.endedAt);
    const k = `${r.endpoint}\u0000${end.getUTCFullYear()}-${end.getUTCMonth() + 1}`;
    const c = counts.get(k) ?? { host: r.endpoint, month: end.getUTCMonth() + 1, year: end.getUTCFullYear(), n: 0 };
    c.n += 1;
    counts.set(k, c);
  }
  return [...counts.values()].map((c) => syncRecord(c, o));
}

export function syncRecord(c: MonthCount, o: ApelOptions): string {
  return apelRecord([
    ['Site', o.site],
    ['SubmitHost', c.host],
    ['NumberOfJobs', c.n],
    ['Month', c.month],
    ['Year', c.year],
  ]);
}

export function sync(records: readonly AccountingRecord[], o: ApelOptions): string {
  return apelMessage(SYNC_HEADER, syncRecords(records, o));
}
