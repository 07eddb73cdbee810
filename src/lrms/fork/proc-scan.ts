/**
 * One pass over /proc for the processes of some jobs (./job-processes.ts says which
 * processes are a job's). Synchronous on purpose: it runs on the scanning thread
 * (./proc-scan-worker.ts), where blocking reads cost the service's event loop and thread
 * pool nothing, and a read that hangs (environ takes the target's memory-map lock) holds
 * up only that thread, which the scanner then replaces.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable the wrapper puts the job's mark in. */
export const JOB_MARK = 'CERES_JOB_MARK';

/** What one pass needs of a job: its mark, and its wrapper if this instance knew it. */
export interface ScanJob {
  readonly mark: string;
  readonly wrapper?: { readonly pid: number; readonly startTicks: string };
}

interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly sid: number;
  readonly startTicks: string;
}

/** SIGKILL; false when there is nothing to kill (or it must not be: init, ourselves). */
export function killPid(pid: number): boolean {
  if (!(pid > 1) || pid === process.pid) return false;
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined; // gone meanwhile, or not ours to read
  }
}

function procInfo(pid: number): ProcInfo | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses: fields follow the last ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (f[0] === 'Z' || f[0] === 'X') return undefined;
  return { pid, ppid: Number(f[1]), sid: Number(f[3]), startTicks: f[19] ?? '0' };
}

/** Does the process's environment carry one of the marks? */
function hasMark(pid: number, marks: ReadonlySet<string>): boolean {
  const env = readProc(`/proc/${pid}/environ`) ?? '';
  for (const entry of env.split('\0'))
    if (entry.startsWith(`${JOB_MARK}=`) && marks.has(entry.slice(JOB_MARK.length + 1))) return true;
  return false;
}

const laterOrEqual = (a: string, b: string): boolean => BigInt(a) >= BigInt(b);

/** One pass: SIGKILL what belongs to any of `jobs`; the number of processes killed. */
export function scanProcOnce(jobs: readonly ScanJob[], spare: ReadonlySet<number>): number {
  const marks = new Set(jobs.map((j) => j.mark));
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return 0;
  }
  const infos: ProcInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const p = procInfo(Number(n));
    if (p) infos.push(p);
  }
  const byPid = new Map(infos.map((p) => [p.pid, p]));
  // The session of a wrapper that is gone (no process has its pid): a process still in
  // it and started after the wrapper belongs to the job. While the wrapper lives, the
  // wrapper itself looks after its session.
  const sessions = new Map<number, { readonly startTicks: string }>();
  for (const j of jobs)
    if (j.wrapper && j.wrapper.pid > 1 && !byPid.has(j.wrapper.pid)) sessions.set(j.wrapper.pid, j.wrapper);
  const hit = new Set<number>();
  for (const p of infos) {
    if (spare.has(p.pid)) continue;
    const w = sessions.get(p.sid);
    if ((w && laterOrEqual(p.startTicks, w.startTicks)) || hasMark(p.pid, marks)) hit.add(p.pid);
  }
  // Descendants of what was found (a child that cleared its environment and left the session).
  for (let grew = true; grew;) {
    grew = false;
    for (const p of infos) {
      if (!hit.has(p.pid) && hit.has(p.ppid) && !spare.has(p.pid)) {
        hit.add(p.pid);
        grew = true;
      }
    }
  }
  let killed = 0;
  for (const pid of hit) if (killPid(pid)) killed++;
  return killed;
}
