/**
 * What the job page shows of a job's past, read from the files the service already
 * keeps (docs/control-directory.md), so the timeline costs no extra write per job:
 *
 *  - the `errors` control file: the engine appends one line per state change,
 *    `<UTC time> Job state change OLD -> NEW   Reason: <text>`, and staging messages as
 *    `<UTC time> <text>`. The timeline is its state-change lines; the other lines are
 *    the job's messages. The line is appended after the state is committed in the
 *    database, so a crash between the two can lose a line (never add a wrong one): the
 *    page then ends the timeline with the record's current state, marked as not logged.
 *  - the `diag` control file: the batch backend's `key=value` usage (wall and CPU time,
 *    maximum resident memory, exit code, node), copied when the batch job ends.
 */

export interface Transition {
  readonly at: string;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
}

export interface LogMessage {
  readonly at: string;
  readonly text: string;
}

export interface ErrorsFile {
  readonly transitions: readonly Transition[];
  readonly messages: readonly LogMessage[];
}

const TIMED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (.*)$/;
const CHANGE = /^Job state change (\S+) -> (\S+)(?: {3}Reason: (.*))?$/;

/** Splits the `errors` file into state changes and other messages (untimed lines kept as messages). */
export function parseErrorsFile(text: string | undefined): ErrorsFile {
  const transitions: Transition[] = [];
  const messages: LogMessage[] = [];
  for (const line of (text ?? '').split('\n')) {
    if (line.trim() === '') continue;
    const t = TIMED.exec(line);
    const at = t ? (t[1] as string).replace('T', ' ').replace('Z', ' UTC') : '';
    const rest = t ? (t[2] as string) : line;
    const c = CHANGE.exec(rest);
    if (c && t) transitions.push({ at, from: c[1] as string, to: c[2] as string, reason: c[3] ?? '' });
    else messages.push({ at, text: rest });
  }
  return { transitions, messages };
}

export interface Usage {
  readonly node?: string;
  readonly wallSeconds?: number;
  readonly userSeconds?: number;
  readonly kernelSeconds?: number;
  readonly maxRssKiB?: number;
  readonly exitCode?: number;
  readonly message?: string;
}

const seconds = (v: string | undefined): number | undefined => {
  const m = v === undefined ? null : /^(\d+(?:\.\d+)?)s?$/.exec(v.trim());
  return m ? Number(m[1]) : undefined;
};

/** The batch backend's `diag` file as usage figures; unknown or malformed keys are left out. */
export function parseDiag(text: string | undefined): Usage | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const kv = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) kv.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  const rss = /^(\d+)\s*kB$/i.exec(kv.get('MaxResidentMemory') ?? '');
  const code = /^-?\d+$/.exec(kv.get('exitcode') ?? '');
  const u: Record<string, string | number> = {};
  const put = (k: keyof Usage, v: string | number | undefined) => {
    if (v !== undefined && v !== '') u[k] = v;
  };
  put('node', kv.get('nodename'));
  put('wallSeconds', seconds(kv.get('WallTime')));
  put('userSeconds', seconds(kv.get('UserTime')));
  put('kernelSeconds', seconds(kv.get('KernelTime')));
  put('maxRssKiB', rss ? Number(rss[1]) : undefined);
  put('exitCode', code ? Number(code[0]) : undefined);
  put('message', kv.get('LRMSMessage'));
  return u;
}

/** `1 h 02 min 03 s`, `4.20 s`: durations as a person reads them. */
export function duration(s: number): string {
  if (s < 60) return `${s.toFixed(2)} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.round(s % 60);
  const mm = String(m).padStart(2, '0');
  const ss = String(sec).padStart(2, '0');
  return h > 0 ? `${h} h ${mm} min ${ss} s` : `${m} min ${ss} s`;
}

/** `1.5 MiB`: a size in KiB as a person reads it. */
export function kib(n: number): string {
  if (n < 1024) return `${n} KiB`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024).toFixed(2)} GiB`;
}
