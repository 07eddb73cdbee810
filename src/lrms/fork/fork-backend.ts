/**
 * The embedded `fork` batch backend: runs each job on this host as its own process
 * group, under a small job wrapper (C, or sh as a fallback) that a long-lived launcher
 * process starts. Design and reasons: docs/batch-backends.md.
 *
 *   service ──binary frames──▶ launcher (small C program; Node fallback) ──posix_spawn, detached──▶ wrapper
 *                                                                            └─fork─▶ sh job.sh ─▶ executable
 *
 * How the end of a job is noticed:
 *  - jobs started by this instance: the launcher reaps the wrapper and says so at once.
 *    In a burst the exit often arrives before submit() has registered the job: it is
 *    kept until that submit consumes it. Past `maxUnclaimedExits` (or when the launcher
 *    died meanwhile) the exit is not kept, and every submit that overlapped the loss
 *    reads its job's status file instead: an exit is never forgotten;
 *  - jobs recovered after a restart, submitted twice, or left when the launcher died:
 *    the status file is polled (`pollIntervalMs`), and a wrapper that vanished without
 *    one (checked against its start time, so a reused pid does not count) is "lost";
 *  - the backstop, whatever went wrong above: every `backstopIntervalMs` one pass stats
 *    the status file (and reads the wrapper's /proc stat line) of every running job, and
 *    checks the job properly when either says it ended.
 * Either way the result comes from the status file the wrapper wrote before exiting.
 *
 * No process of a job outlives its final update: before delivering it the backend
 * empties the job's cgroup and, when the wrapper did not see the job to the end (lost,
 * cancelled), scans /proc for the job's mark and session (./job-processes.ts).
 */
import { access, chmod, constants, lstat, mkdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ceError } from '../../errors/ce-error.js';
import { AccountResolver } from '../../accounts/resolve-account.js';
import { wrapperCredentials } from './job-account.js';
import type {
  BatchBackend,
  BatchJobRef,
  BatchJobSpec,
  BatchResult,
  BatchUpdate,
  BatchUpdateListener,
} from '../backend.js';
import {
  JOB_SCRIPT,
  STATUS_FILE,
  lostResult,
  readPidFile,
  readStatus,
  wrapperAlive,
  writeAtomic,
  type PidRecord,
} from '../core/job-files.js';
import { jobScript, validateSpec } from '../core/job-script.js';
import { LauncherClient, type LauncherProgram } from './launcher-client.js';
import { jobCgroup, jobCgroupRoot, jobMark, ProcessSweeper, sweepCgroup } from './job-processes.js';
import { ARGS_ENV, ARGS_FILE, argsFileText, wrapperArgs } from '../core/wrapper-args.js';
import { inSharedTmp, jobScratch, probePrivateTmp, removeScratch, scratchRoot } from './private-tmp.js';
import { ensureWrapper, type WrapperBinary, type WrapperKind } from '../core/wrapper-build.js';
import { ensureLauncher, type LauncherKind } from './launcher-build.js';

import type { BackendLog } from '../core/backend-log.js';
import { chainStart, queueUpdate, type UpdateTarget } from '../core/update-chain.js';

export type { BackendLog };

export interface ForkBackendOptions {
  /** The backend's own directory (the compiled wrapper lives in `bin/`). */
  readonly workDir: string;
  /** Which wrapper: `auto` compiles the C one and falls back to sh. */
  readonly wrapper?: 'auto' | WrapperKind;
  readonly compiler?: string;
  /** Which launcher: `auto` compiles the C one and falls back to the Node one. */
  readonly launcher?: 'auto' | LauncherKind;
  /** PATH the jobs start with. */
  readonly jobPath?: string;
  /** Between TERM and KILL when a job is cancelled or over a limit. */
  readonly killGraceSeconds?: number;
  /** How often the wrapper samples memory and CPU of jobs with such limits. */
  readonly sampleIntervalMs?: number;
  /** How often status files of jobs not started by this instance are checked. */
  readonly pollIntervalMs?: number;
  /** At most this many wrapper exits are kept while their submit() has not registered the job. */
  readonly maxUnclaimedExits?: number;
  /** How often every running job's status file is looked at, whatever else reported its end. */
  readonly backstopIntervalMs?: number;
  /** `auto`: put each job in its own cgroup v2 when the service may create cgroups; `off`: never. */
  readonly cgroups?: 'auto' | 'off';
  /** `auto`: jobs under local accounts get a private /tmp, /var/tmp and /dev/shm where the kernel allows; `off`: never. */
  readonly privateTmp?: 'auto' | 'off';
  /** After the grace time, how long a cancelled job's wrapper has to finish before it is killed. */
  readonly cancelMarginMs?: number;
  /** Resolves `localAccount` of a spec (docs/security.md); default: the name service, cached a minute. */
  readonly accounts?: AccountResolver;
  readonly log?: BackendLog;
}

interface Tracked {
  readonly localId: string;
  readonly jobId: string;
  readonly lrmsDir: string;
  readonly rec: PidRecord;
  /** A cancel was asked for: the end sweeps the job's processes thoroughly. */
  cancelled: boolean;
  /** Not (or no longer) a child of our launcher: watch its status file. */
  polled: boolean;
  /** A status check is running. */
  checking: boolean;
  /** The final update is queued: reported exactly once. */
  ended: boolean;
  /** Updates of this job, delivered in order. */
  chain: Promise<void>;
}

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Jobs looked at concurrently by one backstop pass. */
const BACKSTOP_BATCH = 64;

/** lstat: the name exists (whatever it is; the full check judges it). */
const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

export class ForkBackend implements BatchBackend {
  readonly name = 'fork';
  /** submit() resolves once the wrapper has claimed the job and started it. */
  readonly runsOnSubmit = true;
  readonly wrapper: WrapperBinary;
  readonly launcher: LauncherProgram;
  readonly #o: Required<
    Omit<ForkBackendOptions, 'log' | 'wrapper' | 'compiler' | 'cgroups' | 'launcher' | 'privateTmp'>
  > & {
    log: BackendLog | undefined;
  };
  /** Where jobs' cgroups are made; undefined: processes are tracked by mark and session only. */
  readonly cgroupRoot: string | undefined;
  /** Where jobs' private temporary folders are made; undefined: jobs share the host's (./private-tmp.ts). */
  readonly scratchRoot: string | undefined;
  /** The log said once that a job's session directory lies in a shared temporary folder. */
  #saidSessionInTmp = false;
  readonly #sweeper: ProcessSweeper;
  readonly #launcher: LauncherClient;
  readonly #jobs = new Map<string, Tracked>();
  /** Wrappers (that claimed a job) the launcher saw exit before their submit() registered the job. */
  readonly #unclaimedExits = new Set<number>();
  /** Counts events that may have lost an exit (bound reached, launcher died): submits spanning one check the status file. */
  #exitsMissed = 0;
  /** Jobs whose status file is polled. */
  readonly #polled = new Set<Tracked>();
  #listener: BatchUpdateListener | undefined;
  readonly #updates: UpdateTarget<Tracked> = {
    name: 'fork',
    jobs: this.#jobs,
    listener: () => this.#listener,
    closed: () => this.#closed,
    log: () => this.#o.log,
  };
  #timer: NodeJS.Timeout | undefined;
  #backstop: NodeJS.Timeout | undefined;
  /** A backstop pass is running: at most one at a time. */
  #backstopBusy = false;
  #closed = false;

  private constructor(
    options: ForkBackendOptions,
    wrapper: WrapperBinary,
    launcher: LauncherProgram,
    cgroupRoot: string | undefined,
    scratch: string | undefined,
  ) {
    this.wrapper = wrapper;
    this.launcher = launcher;
    this.cgroupRoot = cgroupRoot;
    this.scratchRoot = scratch;
    this.#sweeper = new ProcessSweeper(() => new Set([process.pid, this.#launcher.pid ?? 0]));
    this.#o = {
      workDir: options.workDir,
      jobPath: options.jobPath ?? DEFAULT_PATH,
      killGraceSeconds: options.killGraceSeconds ?? 10,
      sampleIntervalMs: options.sampleIntervalMs ?? 1000,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
      maxUnclaimedExits: options.maxUnclaimedExits ?? 100_000,
      backstopIntervalMs: options.backstopIntervalMs ?? 10_000,
      // The wrapper may spend up to 10 s reaping the job after the KILL.
      cancelMarginMs: options.cancelMarginMs ?? 15_000,
      accounts: options.accounts ?? new AccountResolver(),
      log: options.log,
    };
    this.#launcher = new LauncherClient(
      {
        onExit: (pid, claimed) => this.#onWrapperExit(pid, claimed),
        onDeath: () => this.#onLauncherDeath(),
      },
      launcher,
    );
  }

  /** Prepare the work directory and the wrapper (compiling it on first use). */
  static async create(options: ForkBackendOptions): Promise<ForkBackend> {
    // The wrapper binary and the cgroup bookkeeping: the service's alone.
    await mkdir(options.workDir, { recursive: true, mode: 0o700 });
    await chmod(options.workDir, 0o700);
    const wrapper = await ensureWrapper(options.workDir, options.wrapper ?? 'auto', options.compiler ?? 'cc', (why) =>
      options.log?.warn(
        { why },
        'fork backend: C job wrapper unavailable, using the sh wrapper (reduced accounting, no memory limit)',
      ),
    );
    const launcher = await ensureLauncher(
      options.workDir,
      options.launcher ?? 'auto',
      options.compiler ?? 'cc',
      (why) =>
        options.log?.warn({ why }, 'fork backend: C launcher unavailable, using the Node launcher (more CPU per job)'),
    );
    const cg =
      options.cgroups === 'off' ? { why: 'cgroups off (lrms.fork.cgroups)' } : await jobCgroupRoot(options.workDir);
    options.log?.info?.(
      { tracking: cg.root ? 'cgroup' : 'process-scan', why: cg.why },
      cg.root
        ? "fork backend: each job's processes are held in its own cgroup v2"
        : "fork backend: jobs' processes are tracked by their environment mark and session (no usable cgroup v2)",
    );
    const scratch = await ForkBackend.#privateTmp(options, wrapper);
    return new ForkBackend(options, wrapper, launcher, cg.root, scratch);
  }

  /**
   * Where jobs' private temporary folders go, or undefined when jobs share the host's:
   * off, a service that is not root (its jobs run as itself: as before), the sh wrapper,
   * or a kernel that refuses mount namespaces (said in the log).
   */
  static async #privateTmp(options: ForkBackendOptions, wrapper: WrapperBinary): Promise<string | undefined> {
    if (options.privateTmp === 'off' || process.geteuid?.() !== 0 || wrapper.kind !== 'c') return undefined;
    const probe = await probePrivateTmp(wrapper.path);
    if (!probe.ok) {
      options.log?.warn(
        { why: probe.why },
        'fork backend: jobs share /tmp, /var/tmp and /dev/shm (no private temporary folders: the service needs CAP_SYS_ADMIN)',
      );
      return undefined;
    }
    const root = scratchRoot(options.workDir);
    await mkdir(root, { recursive: true, mode: 0o700 });
    await chmod(root, 0o700);
    options.log?.info?.({}, 'fork backend: jobs under local accounts get a private /tmp, /var/tmp and /dev/shm');
    return root;
  }

  /** The job's scratch folder for its private /tmp, or '' when it shares the host's. */
  async #scratchFor(spec: BatchJobSpec, cred: string): Promise<string> {
    if (this.scratchRoot === undefined || cred === '') return '';
    const folder = await inSharedTmp(spec.sessionDir);
    if (folder !== undefined) {
      if (!this.#saidSessionInTmp)
        this.#o.log?.warn(
          { folder },
          'fork backend: session directories in a shared temporary folder: those jobs share /tmp, /var/tmp and /dev/shm',
        );
      this.#saidSessionInTmp = true;
      return '';
    }
    return jobScratch(this.scratchRoot, jobMark(spec.lrmsDir));
  }

  /** Process id of the launcher, once started. */
  get launcherPid(): number | undefined {
    return this.#launcher.pid;
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#listener = listener;
  }

  async submit(spec: BatchJobSpec): Promise<string> {
    this.#assertOpen();
    validateSpec(spec);
    // Before anything is written or started: an account that does not resolve fails the
    // submission; it never means "run as the service user".
    const as = await wrapperCredentials(spec.localAccount, this.#o.accounts, this.wrapper.kind);
    // The wrapper's files: the service's alone, never reachable from the job.
    const made = await mkdir(spec.lrmsDir, { recursive: true, mode: 0o700 });
    // A directory made just now holds no wrapper's claim: only one that was there already
    // (a submission repeated after a crash) is looked at. Two submits racing for a new
    // directory are told apart by the wrapper itself ("dup").
    const claimed = made === undefined ? await readPidFile(spec.lrmsDir) : undefined;
    if (claimed) return this.#attach(spec, claimed);
    await writeAtomic(join(spec.lrmsDir, JOB_SCRIPT), jobScript(spec));
    const args = wrapperArgs(spec, {
      killGraceSeconds: this.#o.killGraceSeconds,
      sampleIntervalMs: this.#o.sampleIntervalMs,
      cgroup: jobCgroup(this.cgroupRoot, jobMark(spec.lrmsDir)) ?? '',
      credential: as.cred,
      scratch: await this.#scratchFor(spec, as.cred),
    });
    const env: Record<string, string> = { PATH: this.#o.jobPath, HOME: spec.sessionDir, ...as.env };
    // The C wrapper reads its arguments from a file only root can read: on its command
    // line every local user would see the job's directories with ps. (The sh wrapper runs
    // jobs as the service's user only.)
    if (this.wrapper.kind === 'c') {
      await writeAtomic(join(spec.lrmsDir, ARGS_FILE), argsFileText(args));
      env[ARGS_ENV] = join(spec.lrmsDir, ARGS_FILE);
    }
    const missed = this.#exitsMissed;
    const started = await this.#launcher.spawn(this.wrapper.path, this.wrapper.kind === 'c' ? [] : args, env);
    if (started.line === 'dup') {
      // Another wrapper claimed the directory first (a submit repeated after a crash).
      const other = await readPidFile(spec.lrmsDir);
      if (other) return this.#attach(spec, other);
    }
    if (!started.line.startsWith('ok ')) {
      throw ceError(
        'CE_ERR_LRMS_SUBMIT_FAILED',
        `The job wrapper did not start: ${started.line.replace(/^error /, '') || 'no answer'}`,
      );
    }
    let rec: PidRecord;
    // The C wrapper says its start ticks in its answer ("ok <pid> <ticks>"), printed before
    // the job starts (the job cannot write to that pipe): no read of the pid file. The sh
    // wrapper says only its pid: the pid file has the ticks.
    const said = /^ok (\d+) (\d+)$/.exec(started.line);
    if (said && Number(said[1]) === started.pid) {
      rec = { pid: started.pid, startTicks: said[2] ?? '0' };
    } else {
      try {
        rec = (await readPidFile(spec.lrmsDir)) ?? { pid: started.pid, startTicks: '0' };
        // The job may already run and could have replaced the file: the launcher's pid is the truth.
        if (rec.pid !== started.pid) rec = { pid: started.pid, startTicks: '0' };
      } catch (e) {
        this.#unclaimedExits.delete(started.pid);
        throw e;
      }
    }
    // From here on synchronous: an exit reported later finds the job registered.
    const exited = this.#unclaimedExits.delete(started.pid);
    const localId = String(rec.pid);
    // A concurrent submit of the same directory may have attached to it meanwhile.
    const known = this.#jobs.get(localId);
    if (known) {
      if (exited) void this.#check(known);
      return localId;
    }
    const job = this.#track(spec, localId, rec, false);
    this.#queue(job, { kind: 'state', jobId: job.jobId, state: 'RUNNING' });
    // Its exit may have been one that could not be kept: the status file tells.
    if (exited || this.#exitsMissed !== missed) void this.#check(job);
    return localId;
  }

  async recover(jobs: readonly BatchJobRef[]): Promise<void> {
    this.#assertOpen();
    for (const ref of jobs) {
      if (this.#jobs.has(ref.localId)) continue;
      const rec = await readPidFile(ref.lrmsDir);
      if (rec && String(rec.pid) === ref.localId) {
        await this.#attach(ref, rec);
        continue;
      }
      const job = this.#track(ref, ref.localId, { pid: 0, startTicks: '0' }, true);
      this.#finish(job, (await readStatus(ref.lrmsDir)) ?? lostResult('no record of its job wrapper'));
    }
  }

  async cancel(localId: string): Promise<boolean> {
    const job = this.#jobs.get(localId);
    if (!job || this.#closed) return false;
    if (job.ended) return true; // its final update is on its way
    job.cancelled = true;
    if (await wrapperAlive(job.rec)) {
      try {
        // The wrapper stops the job's whole process group and records the cancel.
        process.kill(job.rec.pid, 'SIGTERM');
      } catch {
        /* it ended meanwhile: its status file says how */
      }
      // A wrapper that cannot act on it (its own job stopped it with SIGSTOP) is killed
      // once it had the grace time and the time to reap everything; the end is then
      // "lost", reported as cancelled, and the sweep stops what is left of the job.
      setTimeout(() => void this.#forceEnd(job), this.#o.killGraceSeconds * 1000 + this.#o.cancelMarginMs).unref();
    } else {
      void this.#check(job);
    }
    return true;
  }

  async #forceEnd(job: Tracked): Promise<void> {
    if (job.ended || this.#closed || !(await wrapperAlive(job.rec))) return;
    try {
      process.kill(job.rec.pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
    this.#poll(job);
  }

  /**
   * The job's files are about to be removed (clean, end of the session lifetime): kill
   * whatever of it may still run, e.g. a daemon that outlived a killed wrapper.
   */
  async release(ref: Pick<BatchJobRef, 'jobId' | 'lrmsDir'>): Promise<void> {
    const mark = jobMark(ref.lrmsDir);
    await this.#sweeper.sweep({ mark, ...this.#cgroupOf(mark) });
    await this.#removeScratch(mark);
  }

  /** A job's private temporary folders, once none of its processes is left (its wrapper's task, unless it was killed). */
  async #removeScratch(mark: string): Promise<void> {
    if (this.scratchRoot !== undefined) await removeScratch(jobScratch(this.scratchRoot, mark));
  }

  async usable(): Promise<string | undefined> {
    if (this.#closed) return 'fork backend closed';
    // Each submission writes its job files under the working directory.
    return access(this.#o.workDir, constants.W_OK | constants.X_OK).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => `fork backend directory not writable (${e.code ?? 'error'})`,
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#backstop) clearInterval(this.#backstop);
    this.#backstop = undefined;
    await this.#launcher.close();
    await this.#sweeper.close();
    // Only empty: jobs still running keep theirs, and a new instance finds them.
    if (this.cgroupRoot) await rmdir(this.cgroupRoot).catch(() => undefined);
  }

  #cgroupOf(mark: string): { cgroup?: string } {
    const cgroup = jobCgroup(this.cgroupRoot, mark);
    return cgroup ? { cgroup } : {};
  }

  #assertOpen(): void {
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
  }

  /** Start tracking a job whose wrapper claimed its directory; not reported yet. */
  #track(ref: Omit<BatchJobRef, 'localId' | 'sessionDir'>, localId: string, rec: PidRecord, polled: boolean): Tracked {
    const job: Tracked = {
      localId,
      jobId: ref.jobId,
      lrmsDir: ref.lrmsDir,
      rec,
      cancelled: false,
      polled,
      checking: false,
      ended: false,
      // Nothing is delivered before the caller has seen submit() resolve.
      chain: chainStart(),
    };
    this.#jobs.set(job.localId, job);
    if (polled) this.#poll(job);
    this.#startBackstop();
    return job;
  }

  /** Follow a job started by an earlier instance (or an earlier submit of the same directory). */
  async #attach(ref: Omit<BatchJobRef, 'localId' | 'sessionDir'>, rec: PidRecord): Promise<string> {
    const localId = String(rec.pid);
    if (this.#jobs.has(localId)) return localId;
    const job = this.#track(ref, localId, rec, true);
    // Tracked before the first await: a concurrent submit or recover sees it.
    const done = await readStatus(ref.lrmsDir);
    if (done) {
      this.#finish(job, done);
    } else {
      this.#queue(job, { kind: 'state', jobId: job.jobId, state: 'RUNNING' });
      await this.#check(job);
    }
    return localId;
  }

  /** Look at a job's status file; report it, or find the wrapper gone without one. */
  async #check(job: Tracked): Promise<void> {
    if (job.ended || job.checking) return;
    job.checking = true;
    try {
      let result = await readStatus(job.lrmsDir);
      if (!result && !(await wrapperAlive(job.rec))) {
        // It may have written the file just before exiting: look once more.
        result =
          (await readStatus(job.lrmsDir)) ?? lostResult('its job wrapper ended without recording an exit status');
      }
      if (result) this.#finish(job, result);
      else this.#poll(job);
    } catch (e) {
      this.#o.log?.warn({ err: e, job: job.jobId, localId: job.localId }, 'fork backend: cannot read a job status');
    } finally {
      job.checking = false;
    }
  }

  #finish(job: Tracked, result: BatchResult): void {
    if (job.ended) return;
    job.ended = true;
    // Nothing of the job may outlive its final update: its cgroup always, and when its
    // wrapper did not see it to the end (lost) or it was cancelled, a scan for the rest.
    const mark = jobMark(job.lrmsDir);
    const lost = (result.failureReason ?? '').startsWith('job lost');
    const thorough = job.cancelled || lost;
    // A cancelled job whose wrapper had to be killed ended because of the cancel.
    if (job.cancelled && lost) result = { ...result, failureReason: 'cancelled' };
    const cgroup = jobCgroup(this.cgroupRoot, mark);
    const sweep = thorough
      ? async () => {
          await this.#sweeper.sweep({
            mark,
            ...this.#cgroupOf(mark),
            ...(job.rec.pid > 0 ? { wrapper: job.rec } : {}),
          });
          await this.#removeScratch(mark);
        }
      : cgroup
        ? () => sweepCgroup(cgroup)
        : undefined;
    if (sweep) {
      job.chain = job.chain
        .then(sweep)
        .catch((e: unknown) =>
          this.#o.log?.warn(
            { err: e, job: job.jobId, localId: job.localId },
            'fork backend: cannot sweep the processes of a job',
          ),
        );
    }
    this.#queue(job, { kind: 'final', jobId: job.jobId, result });
    this.#polled.delete(job);
    this.#updateTimer();
  }

  #queue(job: Tracked, update: BatchUpdate): void {
    queueUpdate(this.#updates, job, update);
  }

  #onWrapperExit(pid: number, claimed: boolean): void {
    const job = this.#jobs.get(String(pid));
    if (job) {
      void this.#check(job);
    } else if (claimed) {
      // Its submit() has not registered the job yet (a wrapper that answered "dup" or an
      // error ran no job: nothing to keep). Kept until that submit takes it; past the
      // bound, the submits under way read their status files instead.
      if (this.#unclaimedExits.size < this.#o.maxUnclaimedExits) this.#unclaimedExits.add(pid);
      else this.#exitsMissed++;
    }
  }

  #onLauncherDeath(): void {
    // Exits of wrappers whose submit is under way will not come: those submits check.
    this.#exitsMissed++;
    this.#unclaimedExits.clear();
    if (this.#closed) return;
    this.#o.log?.warn(
      {},
      'fork backend: the job launcher ended unexpectedly; watching running jobs by their status files',
    );
    for (const job of this.#jobs.values()) if (!job.ended) this.#poll(job);
  }

  #poll(job: Tracked): void {
    job.polled = true;
    this.#polled.add(job);
    this.#updateTimer();
  }

  /** The backstop runs while the backend is open; it costs nothing when no job runs. */
  #startBackstop(): void {
    if (this.#backstop !== undefined || this.#closed) return;
    this.#backstop = setInterval(() => void this.#backstopPass(), this.#o.backstopIntervalMs);
    this.#backstop.unref();
  }

  /**
   * One look at every running job, cheap enough for tens of thousands: a stat of the
   * status file and a read of the wrapper's /proc stat line (a small batch at a time, so the
   * I/O threads stay available). Only a job that looks ended gets the full check.
   */
  async #backstopPass(): Promise<void> {
    if (this.#backstopBusy || this.#closed) return;
    this.#backstopBusy = true;
    try {
      const running = [...this.#jobs.values()].filter((j) => !j.ended);
      for (let i = 0; i < running.length && !this.#closed; i += BACKSTOP_BATCH) {
        await Promise.all(
          running.slice(i, i + BACKSTOP_BATCH).map(async (job) => {
            if (job.ended || job.checking) return;
            if ((await exists(join(job.lrmsDir, STATUS_FILE))) || !(await wrapperAlive(job.rec)))
              await this.#check(job);
          }),
        );
      }
    } finally {
      this.#backstopBusy = false;
    }
  }

  /** Poll only while some job needs it, so an idle backend keeps no timer. */
  #updateTimer(): void {
    const needed = !this.#closed && this.#polled.size > 0;
    if (needed && this.#timer === undefined) {
      this.#timer = setInterval(() => {
        for (const job of this.#polled) void this.#check(job);
      }, this.#o.pollIntervalMs);
    } else if (!needed && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
