/**
 * `sacct`: what Slurm's accounting (slurmdbd) recorded about a job. Asked for every job
 * that ended where the cluster keeps accounting, for the figures Slurm measured itself
 * (docs/security.md, "What a site can trust in accounting"), and for a job the controller
 * has forgotten (purged after MinJobAge) whose wrapper left no status. Without accounting
 * sacct fails; the backend then asks the controller (`scontrol show job`) instead.
 * Parsable output (`-n -P`), the allocation's line first, then its steps (`<id>.batch`,
 * `<id>.extern`, `<id>.0`, ...).
 */
import type { JobRecord } from './scontrol.js';
import { expandHostList, slurmDuration, slurmTime } from './scontrol.js';

export const SACCT_FIELDS = 'JobID,State,ExitCode,Elapsed,Start,End,NodeList,MaxRSS,UserCPU,SystemCPU';
const FIELD_COUNT = SACCT_FIELDS.split(',').length;
export const sacctArgs = (id: string): string[] => [
  '--noheader',
  '--parsable2',
  `--jobs=${id}`,
  `--format=${SACCT_FIELDS}`,
];

/** `1234K`, `5M`, `2G` (sacct's MaxRSS) in bytes. */
export function sacctBytes(v: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)$/.exec(v.trim());
  if (!m) return 0;
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }[m[2] as '' | 'K' | 'M' | 'G' | 'T'];
  return Math.round(Number(m[1]) * unit);
}

/** sacct's CPU times (`[D-][HH:]MM:SS[.mmm]`) in seconds; undefined when not such a time. */
export function sacctSeconds(v: string): number | undefined {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$/.exec(v.trim());
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/** The job as accounting recorded it. */
export interface SacctJob extends JobRecord {
  /** The largest MaxRSS of its steps; undefined when no step has one (none was sampled). */
  readonly maxRssBytes: number | undefined;
  /** User and system CPU time of all its steps (the allocation line's sums). */
  readonly userCpuSeconds: number | undefined;
  readonly systemCpuSeconds: number | undefined;
  /** The batch step is recorded: the batch script ran and its end reached accounting. */
  readonly batchStep: boolean;
}

/** The job as sacct recorded it; undefined when sacct has no line for it. */
export function parseSacct(stdout: string): SacctJob | undefined {
  const lines = stdout
    .split('\n')
    .map((l) => l.split('|'))
    .filter((f) => f.length === FIELD_COUNT);
  const first = lines[0];
  if (first === undefined) return undefined;
  const [jobId, stateField, exit, elapsed, start, end, nodes, , user, system] = first as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  // "CANCELLED by 0": the state is the first word.
  const state = stateField.split(' ')[0] ?? '';
  if (!/^[A-Z_]+$/.test(state) || !/^\d+$/.test(jobId)) return undefined;
  const ec = /^(\d+):(\d+)$/.exec(exit);
  const rss = lines.map((f) => f[7] ?? '').filter((v) => v.trim() !== '');
  return {
    fields: new Map(),
    state,
    reason: '',
    exitCode: ec ? Number(ec[1]) : null,
    signal: ec ? Number(ec[2]) : 0,
    start: slurmTime(start),
    end: slurmTime(end),
    runSeconds: slurmDuration(elapsed),
    nodes: expandHostList(nodes),
    maxRssBytes: rss.length > 0 ? Math.max(0, ...rss.map(sacctBytes)) : undefined,
    userCpuSeconds: sacctSeconds(user),
    systemCpuSeconds: sacctSeconds(system),
    batchStep: lines.some((f) => f[0] === `${jobId}.batch`),
  };
}
