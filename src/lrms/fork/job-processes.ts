/**
 * Finding and killing every process of a job, including those that left the job's
 * process group and session and even killed their wrapper (docs/batch-backends.md,
 * "Processes of a job"). While the wrapper lives it is the job's subreaper and kills
 * all that is left when the job ends; what this module adds works without it:
 *
 *  - cgroup v2, when the service may create cgroups (its own cgroup on a writable
 *    cgroup2 mount): each job runs in `<service cgroup>/ceres-fork-<hash>/job-<hash>`,
 *    which none of its processes can leave; sweeping it is `cgroup.kill` (or a SIGKILL
 *    per listed pid before Linux 5.14). Chosen by `lrms.fork.cgroups: auto`.
 *  - always, as the fallback and second net: one scan of /proc for processes whose
 *    environment carries the job's mark (`CERES_JOB_MARK=<mark>`, set by the wrapper;
 *    the mark is a hash of the attempt's lrms directory, unique per service and attempt),
 *    or that are in the session of the job's dead wrapper, plus every descendant of
 *    those. A process that clears its environment, starts its own session and is
 *    orphaned after its wrapper was killed escapes this scan: only the cgroup holds it.
 *
 * Scans requested together share one pass over /proc, so a burst of ending jobs costs
 * a few scans, not one each.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PidRecord } from './job-files.js';

/** What identifies a job's processes. */
export interface JobProcesses {
  /** `jobMark(lrmsDir)`. */
  readonly mark: string;
  /** The job's cgroup directory, when cgroups are in use. */
  readonly cgroup?: string;
  /** The wrapper as this instance knows it (not re-read from the job's files). */
  readonly wrapper?: PidRecord;
}

export const JOB_MARK = 'CERES_JOB_MARK';

const hash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 20);

/** The mark of the attempt in `lrmsDir`: derived, so a restart (or a clean) finds it again. */
export const jobMark = (lrmsDir: string): string => hash(lrmsDir);

/**
 * The cgroup v2 directory under which jobs get their cgroups, or why there is none:
 * the service's own cgroup on the cgroup2 mount, if a subdirectory can be made there.
 */
export async function jobCgroupRoot(workDir: string): Promise<{ root?: string; why: string }> {
  try {
    const own = /^0::(\/.*)$/m.exec(await readFile('/proc/self/cgroup', 'utf8'))?.[1];
    if (own === undefined) return { why: 'no cgroup v2 hierarchy for this process' };
    // mountinfo: ... <mount point> <options> - <fs type> <source> <super options>
    const mount = (await readFile('/proc/self/mountinfo', 'utf8'))
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2')?.[4];
    if (mount === undefined) return { why: 'cgroup2 is not mounted' };
    const root = join(mount, own, `ceres-fork-${hash(workDir)}`);
    await mkdir(root, { recursive: true });
    return { root, why: `cgroup v2 at ${root}` };
  } catch (e) {
    return { why: `cgroup v2 not writable (${e instanceof Error ? e.message : String(e)})` };
  }
}

/** The cgroup of the attempt with `mark` under `root`. */
export function jobCgroup(root: string | undefined, mark: string): string | undefined {
  return root === undefined ? undefined : join(root, `job-${mark}`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function cgroupPids(cgroup: string): Promise<number[]> {
  const text = await readFile(join(cgroup, 'cgroup.procs'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

/** Kill every process of `cgroup` and remove it; a cgroup that is gone is done. */
export async function sweepCgroup(cgroup: string): Promise<void> {
  // The usual case first, in one call: the wrapper removed the cgroup after reaping the job
  // (ENOENT), or it is empty (removed now). The kernel refuses to remove a cgroup that
  // still holds a process (EBUSY): only then is it emptied.
  const first = await rmdir(cgroup).then(
    () => undefined,
    (e: NodeJS.ErrnoException) => e.code,
  );
  if (first === undefined || first === 'ENOENT') return;
  for (let round = 0; round < 100; round++) {
    const pids = await cgroupPids(cgroup);
    if (pids.length === 0) break;
    const killed = await writeFile(join(cgroup, 'cgroup.kill'), '1').then(
      () => true,
      () => false,
    );
    if (!killed) for (const pid of pids) kill(pid);
    await sleep(20);
  }
  await rmdir(cgroup).catch(() => undefined);
}

function kill(pid: number): boolean {
  if (!(pid > 1) || pid === process.pid) return false;
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly sid: number;
  readonly startTicks: string;
}

async function procInfo(pid: number): Promise<ProcInfo | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => undefined);
  if (stat === undefined) return undefined;
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (f[0] === 'Z' || f[0] === 'X') return undefined;
  return { pid, ppid: Number(f[1]), sid: Number(f[3]), startTicks: f[19] ?? '0' };
}

/** Does the process's environment carry one of the marks? */
async function markOf(pid: number, marks: ReadonlyMap<string, JobProcesses>): Promise<boolean> {
  const env = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
  for (const entry of env.split('\0'))
    if (entry.startsWith(`${JOB_MARK}=`) && marks.has(entry.slice(JOB_MARK.length + 1))) return true;
  return false;
}

/**
 * The session of a wrapper that is gone (no process has its pid): a process still in
 * it and started after the wrapper belongs to the job. While the wrapper lives, the
 * wrapper itself looks after its session.
 */
function deadWrapperSessions(
  jobs: readonly JobProcesses[],
  byPid: ReadonlyMap<number, ProcInfo>,
): Map<number, PidRecord> {
  const out = new Map<number, PidRecord>();
  for (const j of jobs)
    if (j.wrapper && j.wrapper.pid > 1 && !byPid.has(j.wrapper.pid)) out.set(j.wrapper.pid, j.wrapper);
  return out;
}

const laterOrEqual = (a: string, b: string): boolean => BigInt(a) >= BigInt(b);

/** One pass over /proc: SIGKILL what belongs to any of `jobs`; the number of processes killed. */
async function scanOnce(jobs: readonly JobProcesses[], spare: ReadonlySet<number>): Promise<number> {
  const marks = new Map(jobs.map((j) => [j.mark, j]));
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((n) => /^\d+$/.test(n)).map(Number);
  const infos: ProcInfo[] = [];
  for (let i = 0; i < pids.length; i += 128) {
    for (const p of await Promise.all(pids.slice(i, i + 128).map(procInfo))) if (p) infos.push(p);
  }
  const byPid = new Map(infos.map((p) => [p.pid, p]));
  const sessions = deadWrapperSessions(jobs, byPid);
  const hit = new Set<number>();
  for (let i = 0; i < infos.length; i += 128) {
    await Promise.all(
      infos.slice(i, i + 128).map(async (p) => {
        if (spare.has(p.pid)) return;
        const w = sessions.get(p.sid);
        if ((w && laterOrEqual(p.startTicks, w.startTicks)) || (await markOf(p.pid, marks))) hit.add(p.pid);
      }),
    );
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
  for (const pid of hit) if (kill(pid)) killed++;
  return killed;
}

/** Sweeps jobs' processes: scans asked for together share passes over /proc. */
export class ProcessSweeper {
  #queued: { job: JobProcesses; done: () => void; failed: (e: unknown) => void }[] = [];
  #draining = false;

  /** @param spare processes never to kill (the service, its launcher). */
  constructor(private readonly spare: () => ReadonlySet<number>) {}

  /** Kill every process of `job` (its cgroup, then a /proc scan); resolves when none is left that can be found. */
  async sweep(job: JobProcesses): Promise<void> {
    if (job.cgroup) await sweepCgroup(job.cgroup);
    await new Promise<void>((done, failed) => {
      this.#queued.push({ job, done, failed });
      // Not awaited here: the drain serves every caller queued meanwhile, and it never
      // rejects (a failed pass rejects the sweeps of its batch instead).
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queued.length > 0) {
        const batch = this.#queued;
        this.#queued = [];
        const jobs = batch.map((b) => b.job);
        try {
          // Killed processes cannot fork any more: repeat until a pass finds nothing.
          for (let pass = 0; pass < 10 && (await scanOnce(jobs, this.spare())) > 0; pass++) await sleep(10);
          for (const b of batch) b.done();
        } catch (e) {
          for (const b of batch) b.failed(e);
        }
      }
    } finally {
      this.#draining = false;
    }
  }
}
