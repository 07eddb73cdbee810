/**
 * `sacct` for a job Slurm's controller has forgotten (purged after MinJobAge) and whose
 * wrapper left no status: where slurmdbd keeps accounting, it still knows how the job
 * ended. Asked once per such job; without accounting sacct fails and the job is lost.
 * Parsable output (`-n -P`), the allocation's line first, then its steps.
 */
import type { JobRecord } from './scontrol.js';
import { expandHostList, slurmDuration, slurmTime } from './scontrol.js';

export const SACCT_FIELDS = 'State,ExitCode,Elapsed,Start,End,NodeList,MaxRSS';
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

/** The job as sacct recorded it, with the largest MaxRSS of its steps; undefined when sacct has no line for it. */
export function parseSacct(stdout: string): (JobRecord & { maxRssBytes: number }) | undefined {
  const lines = stdout.split('\n').filter((l) => l.split('|').length === 7);
  const first = lines[0];
  if (first === undefined) return undefined;
  const [stateField, exit, elapsed, start, end, nodes] = first.split('|') as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  // "CANCELLED by 0": the state is the first word.
  const state = stateField.split(' ')[0] ?? '';
  if (!/^[A-Z_]+$/.test(state)) return undefined;
  const ec = /^(\d+):(\d+)$/.exec(exit);
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
    maxRssBytes: Math.max(0, ...lines.map((l) => sacctBytes(l.split('|')[6] ?? ''))),
  };
}
