/**
 * The files a job wrapper leaves in the job's lrms directory, and how to read them:
 *
 *   pid      "<pid> <start ticks>"  written (hard link) when the wrapper claims the directory
 *   status   key=value              written last, atomically: the job has ended
 *   diag     key=value (A-REX §8.4) accounting for the diag control file
 *   failure  one line               written by job.sh when it could not run the executable
 *   job.sh                          the job script (./job-script.ts)
 *
 * The start ticks (field 22 of /proc/<pid>/stat) tell a live wrapper from an unrelated
 * process that reused its pid after a restart.
 */
import { writeFileAtomic } from '../../fs/atomic-write.js';
import { NotAJobFileError, readJobFile } from '../job-file.js';
import type { BatchResult } from '../backend.js';

export const PID_FILE = 'pid';
export const STATUS_FILE = 'status';
export const JOB_SCRIPT = 'job.sh';

/**
 * The wrapper's exit code when it could not write its status file (after trying diag and
 * status): the job ran, its end is unrecorded. Distinct from the wrapper's other exits (0
 * done or a duplicate, 1 could not claim, 2 usage), so a batch system's record of the
 * batch script's exit tells the backend why no status came (slurm/job-result.ts). The C
 * wrapper also prints `error cannot write the <name> file <path>: <reason>` on the output
 * it was started with (Slurm's slurm.out).
 */
export const STATUS_UNWRITTEN_EXIT = 3;

export interface PidRecord {
  readonly pid: number;
  /** '0' when the wrapper could not read it (no /proc). */
  readonly startTicks: string;
}

/** Replace `path` atomically: a wrapper already running the old file keeps reading it whole. */
export async function writeAtomic(path: string, text: string): Promise<void> {
  // Not fsync'd: a submission repeated after a crash writes it again.
  await writeFileAtomic(path, text, { durable: false });
}

/** The file's text; a name that is not a real record (job-file.ts) throws NotAJobFileError. */
function readOptional(path: string): Promise<string | undefined> {
  return readJobFile(path, 4096);
}

export async function readPidFile(lrmsDir: string): Promise<PidRecord | undefined> {
  const text = await readOptional(`${lrmsDir}/${PID_FILE}`).catch((e: unknown) => {
    if (e instanceof NotAJobFileError) return undefined; // no usable record of a wrapper
    throw e;
  });
  const m = text === undefined ? null : /^([1-9]\d*) (\d+)\s*$/.exec(text);
  if (!m) return undefined;
  return { pid: Number(m[1]), startTicks: m[2] ?? '0' };
}

/** Start ticks of a live (not zombie) process, or undefined when there is none. */
export async function processStartTicks(pid: number): Promise<string | undefined> {
  const stat = await readOptional(`/proc/${pid}/stat`).catch(() => undefined);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19];
}

/** Is the wrapper of `rec` still running (and not a process that reused its pid)? */
export async function wrapperAlive(rec: PidRecord): Promise<boolean> {
  // Never probe pid 0 or below: kill() would address our own process group.
  if (!(rec.pid > 0)) return false;
  const ticks = await processStartTicks(rec.pid);
  if (ticks !== undefined) return rec.startTicks === '0' || ticks === rec.startTicks;
  try {
    // No /proc (or the process is gone): fall back to a plain existence check.
    process.kill(rec.pid, 0);
    return !(await procAvailable());
  } catch {
    return false;
  }
}

let procChecked: Promise<boolean> | undefined;
function procAvailable(): Promise<boolean> {
  procChecked ??= readOptional('/proc/self/stat').then(
    (t) => t !== undefined,
    () => false,
  );
  return procChecked;
}

function keyValues(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) m.set(line.slice(0, i), line.slice(i + 1));
  }
  return m;
}

const num = (v: string | undefined): number => {
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : 0;
};

/** The job's result from its status file, or undefined while the job has not ended. */
export async function readStatus(lrmsDir: string): Promise<BatchResult | undefined> {
  let text: string | undefined;
  try {
    text = await readOptional(`${lrmsDir}/${STATUS_FILE}`);
  } catch (e) {
    if (e instanceof NotAJobFileError)
      return lostResult('its status file was replaced by a link, a special file or nothing');
    throw e;
  }
  if (text === undefined) return undefined;
  const kv = keyValues(text);
  const code = Number(kv.get('exitcode'));
  const user = num(kv.get('usertime'));
  const kernel = num(kv.get('kerneltime'));
  const start = num(kv.get('start'));
  const end = num(kv.get('end'));
  const signal = kv.get('signal') ?? '';
  const failure = kv.get('failure') ?? '';
  const node = kv.get('nodename') ?? '';
  return {
    exitCode: Number.isInteger(code) && code >= 0 ? code : null,
    ...(signal !== '' ? { signal } : {}),
    wallTimeSeconds: num(kv.get('walltime')),
    cpuTimeSeconds: user + kernel,
    userTimeSeconds: user,
    kernelTimeSeconds: kernel,
    maxRssBytes: num(kv.get('maxrss')) * 1024,
    startTime: start > 0 ? new Date(start) : null,
    endTime: end > 0 ? new Date(end) : null,
    nodes: node !== '' ? [node] : [],
    ...(failure !== '' ? { failureReason: failure } : {}),
  };
}

/** The result of a job whose wrapper vanished without writing a status file. */
export function lostResult(why: string): BatchResult {
  return {
    exitCode: null,
    wallTimeSeconds: 0,
    cpuTimeSeconds: 0,
    userTimeSeconds: 0,
    kernelTimeSeconds: 0,
    maxRssBytes: 0,
    startTime: null,
    endTime: null,
    nodes: [],
    failureReason: `job lost: ${why}`,
  };
}

/**
 * The first lines of what the batch script and the wrapper printed (`path`: Slurm's
 * slurm.out, Grid Engine's ge.out), for a job's error when the wrapper left no status;
 * the wrapper's own `ok` lines left out. '' when there is none.
 */
export async function batchOutputHead(path: string): Promise<string> {
  const text = await readJobFile(path, 64 * 1024).catch(() => undefined);
  return (text ?? '')
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^ok \d+( \d+)?$/.test(l))
    .slice(0, 3)
    .join('; ')
    .slice(0, 300);
}
