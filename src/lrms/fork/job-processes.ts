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
 * a few scans, not one each. The pass runs on a worker thread of its own
 * (./proc-scan-worker.ts), reading /proc synchronously there: done with the thread pool,
 * one pass was two file reads per process on the host (~3,700 pool tasks with 460
 * processes), which under load queued every other file operation of the service behind
 * it, made each clean wait 4-6 s for its pass and left the engine unable to keep up
 * (docs/performance.md, "Soak memory": the store grew with cleans not yet carried out).
 */
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PidRecord } from '../core/job-files.js';
import { jobMark, markHash } from '../core/job-mark.js';
import { killPid } from './proc-scan.js';
import { ProcScanner } from './proc-scanner.js';

/** What identifies a job's processes. */
export interface JobProcesses {
  /** `jobMark(lrmsDir)`. */
  readonly mark: string;
  /** The job's cgroup directory, when cgroups are in use. */
  readonly cgroup?: string;
  /** The wrapper as this instance knows it (not re-read from the job's files). */
  readonly wrapper?: PidRecord;
}

export { jobMark };

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
    const root = join(mount, own, `ceres-fork-${markHash(workDir)}`);
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
    if (!killed) for (const pid of pids) killPid(pid);
    await sleep(20);
  }
  await rmdir(cgroup).catch(() => undefined);
}

/** Sweeps jobs' processes: scans asked for together share passes over /proc. */
export class ProcessSweeper {
  #queued: { job: JobProcesses; done: () => void; failed: (e: unknown) => void }[] = [];
  #draining = false;
  readonly #scanner: ProcScanner;

  /**
   * @param spare processes never to kill (the service, its launcher).
   * @param scanner runs the passes (default: a worker thread started on first use).
   */
  constructor(
    private readonly spare: () => ReadonlySet<number>,
    scanner?: ProcScanner,
  ) {
    this.#scanner = scanner ?? new ProcScanner();
  }

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
          for (let pass = 0; pass < 10 && (await this.#scanner.scan(jobs, this.spare())) > 0; pass++) await sleep(10);
          for (const b of batch) b.done();
        } catch (e) {
          for (const b of batch) b.failed(e);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Stops the scanning thread (the backend's close). */
  close(): Promise<void> {
    return this.#scanner.close();
  }
}
