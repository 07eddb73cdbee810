/**
 * `scontrol show job -o ID` (one line of Key=Value pairs): what Slurm knows about one
 * job that ended without a status file from the wrapper. Asked once per such job, never
 * per poll. Values may contain spaces (Command=, WorkDir=): a key starts only where a
 * space is followed by a word and `=`.
 */
export interface JobRecord {
  readonly fields: ReadonlyMap<string, string>;
  readonly state: string;
  readonly reason: string;
  /** Exit status and terminating signal (`ExitCode=3:0`). */
  readonly exitCode: number | null;
  readonly signal: number;
  readonly start: Date | null;
  readonly end: Date | null;
  readonly runSeconds: number;
  readonly nodes: string[];
}

/** Slurm's answer for a job it no longer knows (purged after MinJobAge, or never existed). */
export function isUnknownJob(message: string): boolean {
  return /Invalid job id specified/i.test(message);
}

export function parseKeyValues(line: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=/g;
  const marks: { key: string; at: number; valueAt: number }[] = [];
  for (let m = re.exec(line); m; m = re.exec(line)) {
    marks.push({ key: m[1] as string, at: m.index, valueAt: m.index + m[0].length });
  }
  marks.forEach((k, i) => {
    const next = marks[i + 1];
    out.set(k.key, line.slice(k.valueAt, next ? next.at : line.length).trim());
  });
  return out;
}

/** Slurm's local time stamp (2026-11-25T03:32:01) as a Date; Unknown/None: null. */
export function slurmTime(v: string | undefined): Date | null {
  if (!v || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(v)) return null;
  const d = new Date(v); // no zone: local time, as Slurm prints it
  return Number.isNaN(d.getTime()) ? null : d;
}

/** `[D-]HH:MM:SS` or `MM:SS` in seconds. */
export function slurmDuration(v: string | undefined): number {
  const m = v ? /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(v) : null;
  if (!m) return 0;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3]) * 60 + Number(m[4]);
}

/** `vm`, `n[01-03,07]` → host names (ranges expanded; `(null)`/`None`: none). */
export function expandHostList(v: string | undefined): string[] {
  if (!v || v === '(null)' || v === 'None') return [];
  const out: string[] = [];
  for (const part of v.match(/[^,[]+(?:\[[^\]]*\])?[^,]*/g) ?? []) {
    const m = /^([^[]*)\[([^\]]*)\](.*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    for (const r of (m[2] as string).split(',')) {
      const [a, b] = r.split('-') as [string, string | undefined];
      if (b === undefined) {
        out.push(`${m[1]}${a}${m[3]}`);
        continue;
      }
      for (let n = Number(a); n <= Number(b) && out.length < 10_000; n++)
        out.push(`${m[1]}${String(n).padStart(a.length, '0')}${m[3]}`);
    }
  }
  return out;
}

export function parseScontrolJob(stdout: string): JobRecord | undefined {
  const line = stdout.split('\n').find((l) => l.startsWith('JobId='));
  if (!line) return undefined;
  const f = parseKeyValues(line);
  const state = f.get('JobState');
  if (!state) return undefined;
  const ec = /^(\d+):(\d+)$/.exec(f.get('ExitCode') ?? '');
  return {
    fields: f,
    state,
    reason: f.get('Reason') ?? '',
    exitCode: ec ? Number(ec[1]) : null,
    signal: ec ? Number(ec[2]) : 0,
    start: slurmTime(f.get('StartTime')),
    end: slurmTime(f.get('EndTime')),
    runSeconds: slurmDuration(f.get('RunTime')),
    nodes: expandHostList(f.get('NodeList')),
  };
}
