/**
 * The one squeue call per poll interval, for every job in Slurm (all users and
 * partitions, finished jobs included while Slurm keeps them: MinJobAge), and its parser.
 * One call for all jobs whatever their number: a per-job call would cost a controller RPC
 * per job and interval. The backend picks its own jobs out by id.
 */
export const SQUEUE_FORMAT = '%i|%T|%r|%P|%u|%j';
export const SQUEUE_ARGS = ['--noheader', '--all', '--states=all', `--format=${SQUEUE_FORMAT}`] as const;

export interface QueueEntry {
  readonly id: string;
  readonly state: string;
  readonly reason: string;
  readonly partition: string;
  readonly user: string;
  readonly name: string;
}

export interface ParsedQueue {
  readonly jobs: Map<string, QueueEntry>;
  /** Lines that did not parse (reported, never fatal: one odd job must not blind the backend). */
  readonly bad: string[];
}

const ID = /^\d+(?:_\d+|_\[[^\]]*\]|\+\d+)?$/;
const STATE = /^[A-Z_]+$/;

/**
 * Slurm's pending reason as passed on (BatchUpdate `reason`): none for `None` or an empty
 * field; else printable ASCII, at most REASON_MAX characters. Slurm's reasons are words
 * (`Resources`, `ReqNodeNotAvail,_UnavailableNodes:n[1-3]`), never another job's owner.
 */
export function pendingReason(reason: string): string | undefined {
  const r = reason.replace(/[^\x20-\x7e]/g, '').trim();
  if (r === '' || r === 'None') return undefined;
  return r.length > REASON_MAX ? `${r.slice(0, REASON_MAX)}...` : r;
}

const REASON_MAX = 120;

export function parseSqueue(stdout: string): ParsedQueue {
  const jobs = new Map<string, QueueEntry>();
  const bad: string[] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const f = line.split('|');
    // The name is last and may itself contain '|'.
    if (f.length < 6) {
      bad.push(line);
      continue;
    }
    const [id, state, reason, partition, user] = f as [string, string, string, string, string];
    if (!ID.test(id) || !STATE.test(state)) {
      bad.push(line);
      continue;
    }
    jobs.set(id, { id, state, reason, partition, user, name: f.slice(5).join('|') });
  }
  return { jobs, bad };
}

/** squeue arguments to find the jobs of one name (reconciling a submission whose answer was lost). */
export function squeueByNameArgs(name: string, user: string): string[] {
  // Only the account the attempt was submitted as: any local user can name a job and set
  // its comment, and a job of another account must never be adopted (followed, cancelled).
  return ['--noheader', '--all', '--states=all', `--name=${name}`, `--user=${user}`, '--format=%i|%k'];
}

/** `%i|%k` lines: job id and comment. */
export function parseIdComment(stdout: string): { id: string; comment: string }[] {
  const out: { id: string; comment: string }[] = [];
  for (const line of stdout.split('\n')) {
    const i = line.indexOf('|');
    if (i <= 0) continue;
    const id = line.slice(0, i).trim();
    if (/^\d+$/.test(id)) out.push({ id, comment: line.slice(i + 1).trim() });
  }
  return out;
}
