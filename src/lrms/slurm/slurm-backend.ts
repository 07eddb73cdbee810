/**
 * The `slurm` batch backend: jobs go to a Slurm cluster with sbatch, their states come
 * from one squeue call per poll interval for all jobs, their ends from the status file
 * the job wrapper writes into the lrms directory (so no slurmdbd is needed), and from
 * `scontrol show job` when the wrapper could not write one. The wrapper runs as the job's
 * account, so its status file is the job's word: Slurm's own figures of the job's end
 * (sacct where the site keeps accounting, else scontrol) replace it where Slurm has them
 * (./slurm-figures.ts). Design: docs/batch-backends.md.
 *
 *   submit ──sbatch──▶ Slurm job: slurm.sh ─exec─▶ wrapper (claims lrmsDir) ─▶ job.sh ─▶ executable
 *                                                       └─▶ lrmsDir/status, diag (the end)
 *   poll ──squeue (all jobs, one call)──▶ state updates; a final Slurm state or a job gone
 *          from squeue ──▶ the status file (or scontrol, or "lost") ──▶ the final update
 */
import { AccountResolver } from '../../accounts/resolve-account.js';
import type { BatchCommandObserver } from '../core/command-observer.js';
import { lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ceError } from '../../errors/ce-error.js';
import type {
  BatchBackend,
  BatchClusterInfo,
  BatchJobRef,
  BatchJobSpec,
  BatchResult,
  BatchState,
  BatchUpdate,
  BatchUpdateListener,
} from '../backend.js';
import { PID_FILE, lostResult, readStatus } from '../core/job-files.js';
import { validateSpec } from '../core/job-script.js';
import { ensureWrapper, type WrapperKind } from '../core/wrapper-build.js';
import type { BackendLog } from '../core/backend-log.js';
import { afterCancel } from '../core/cancel-result.js';
import { chainStart, queueUpdate, type UpdateTarget } from '../core/update-chain.js';
import { resultFromSlurm, statusUnwritten, unwrittenResult, writeDiag } from './job-result.js';
import { slurmOutHead } from './lrms-files.js';
import { Poller } from '../core/poller.js';
import { SlurmCommandError, SlurmRunner } from './run-command.js';
import { isUnknownJob, parseScontrolJob } from './scontrol.js';
import { FINAL_STATES, batchState } from './slurm-state.js';
import { SQUEUE_ARGS, parseSqueue, pendingReason, type ParsedQueue, type QueueEntry } from './squeue.js';
import { SINFO_NODES_ARGS, SINFO_PARTITIONS_ARGS, clusterInfo, parseNodes, parsePartitions } from './sinfo.js';
import { submitOnce, type SubmitSettings } from './submission.js';
import { slurmSpecProblem } from './sbatch-options.js';
import { parseSacct, sacctArgs } from './sacct.js';
import { jobReportedOnly, withSlurmFigures, type SlurmFigures } from './slurm-figures.js';

export interface SlurmBackendOptions {
  /** The backend's own directory (the compiled wrapper lives in `bin/`; each job gets a link to it in its lrms directory). */
  readonly workDir: string;
  /** SLURM_CONF for the Slurm commands; empty: the environment's. */
  readonly slurmConf?: string;
  /** Directory of sbatch/squeue/...; empty: PATH. */
  readonly binDir?: string;
  readonly jobNamePrefix?: string;
  readonly defaultPartition?: string;
  readonly pollIntervalMs?: number;
  readonly commandTimeoutMs?: number;
  /** Attempts of sbatch, scancel, scontrol while the controller is unreachable. */
  readonly commandAttempts?: number;
  readonly backoffMs?: number;
  /** Slurm commands (sbatch, squeue, ...) running at once. */
  readonly maxConcurrentCommands?: number;
  /** How old the cluster information (sinfo, job counts) may get before it is asked again. */
  readonly infoRefreshMs?: number;
  /** After Slurm says a started job ended, how long its status file may take to appear (shared file systems lag). */
  readonly statusGraceMs?: number;
  /**
   * Where the cluster keeps accounting (slurmdbd): how long after a job's end its record
   * may take to reach sacct before the controller's figures are used instead.
   */
  readonly accountingWaitMs?: number;
  readonly wrapper?: 'auto' | WrapperKind;
  readonly compiler?: string;
  readonly jobPath?: string;
  readonly killGraceSeconds?: number;
  readonly sampleIntervalMs?: number;
  readonly extraSbatchArgs?: readonly string[];
  readonly switchUser?: 'runuser';
  /** Local accounts by name (default: the name service, cached a minute, never root). */
  readonly accounts?: AccountResolver;
  readonly log?: BackendLog;
  /** Where each Slurm command is reported (metrics: its duration, and whether it failed). */
  readonly commands?: BatchCommandObserver;
}

interface Tracked {
  readonly localId: string;
  readonly jobId: string;
  readonly lrmsDir: string;
  /** Squeue answers from calls that started before this time may not show the job yet. */
  readonly knownSince: number;
  /** When a cancel was asked for (0: never). */
  cancelledAt: number;
  /** scancel has not been confirmed as sent: retried at each poll. */
  cancelPending: boolean;
  scancelRunning: boolean;
  /** What was last reported (state + native + reason), to report changes only. */
  reported: string;
  /** When a poll first saw the job over (or gone) without a status file. */
  endSeenAt: number;
  checking: boolean;
  ended: boolean;
  chain: Promise<void>;
}

const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );
/** Jobs whose status files are read concurrently while Slurm cannot be asked. */
const STATUS_BATCH = 64;

export class SlurmBackend implements BatchBackend {
  readonly name = 'slurm';
  readonly #o: Required<Omit<SlurmBackendOptions, 'log' | 'wrapper' | 'compiler' | 'commands' | 'accounts'>> & {
    log: BackendLog | undefined;
  };
  readonly #runner: SlurmRunner;
  readonly #submit: SubmitSettings;
  readonly #poller: Poller<ParsedQueue>;
  readonly #jobs = new Map<string, Tracked>();
  /** Submissions under way per lrms directory: a concurrent submit of the same attempt joins it. */
  readonly #submitting = new Map<string, Promise<string>>();
  #listener: BatchUpdateListener | undefined;
  readonly #updates: UpdateTarget<Tracked> = {
    name: 'slurm',
    jobs: this.#jobs,
    listener: () => this.#listener,
    closed: () => this.#closed,
    log: () => this.#o.log,
  };
  #closed = false;
  /** The last squeue answer (for the info document); undefined before the first. */
  #lastQueue: { queue: ParsedQueue; at: number } | undefined;
  #cluster: { info: BatchClusterInfo; at: number } | undefined;
  /** When the status files were last read because squeue failed. */
  #lastStatusSweep = 0;
  #clusterRefresh: Promise<void> | undefined;
  /** Whether the cluster keeps accounting (asked once; undefined until known). */
  #accounting: Promise<boolean> | undefined;

  private constructor(o: SlurmBackendOptions, wrapperPath: string) {
    this.#o = {
      workDir: o.workDir,
      slurmConf: o.slurmConf ?? '',
      binDir: o.binDir ?? '',
      jobNamePrefix: o.jobNamePrefix ?? 'ceres-',
      defaultPartition: o.defaultPartition ?? '',
      pollIntervalMs: o.pollIntervalMs ?? 1000,
      commandTimeoutMs: o.commandTimeoutMs ?? 30_000,
      commandAttempts: o.commandAttempts ?? 6,
      backoffMs: o.backoffMs ?? 1000,
      maxConcurrentCommands: o.maxConcurrentCommands ?? 4,
      infoRefreshMs: o.infoRefreshMs ?? 30_000,
      statusGraceMs: o.statusGraceMs ?? 10_000,
      accountingWaitMs: o.accountingWaitMs ?? 30_000,
      jobPath: o.jobPath ?? '/usr/local/bin:/usr/bin:/bin',
      killGraceSeconds: o.killGraceSeconds ?? 10,
      sampleIntervalMs: o.sampleIntervalMs ?? 1000,
      extraSbatchArgs: o.extraSbatchArgs ?? [],
      switchUser: o.switchUser ?? 'runuser',
      log: o.log,
    };
    const log = this.#o.log;
    this.#runner = new SlurmRunner({
      binDir: this.#o.binDir,
      slurmConf: this.#o.slurmConf,
      timeoutMs: this.#o.commandTimeoutMs,
      attempts: this.#o.commandAttempts,
      backoffMs: this.#o.backoffMs,
      maxConcurrent: this.#o.maxConcurrentCommands,
      ...(log ? { log } : {}),
      ...(o.commands ? { commands: o.commands } : {}),
    });
    this.#submit = {
      jobNamePrefix: this.#o.jobNamePrefix,
      defaultPartition: this.#o.defaultPartition,
      killGraceSeconds: this.#o.killGraceSeconds,
      extraArgs: this.#o.extraSbatchArgs,
      jobPath: this.#o.jobPath,
      sampleIntervalMs: this.#o.sampleIntervalMs,
      wrapperPath,
      submitAttempts: this.#o.commandAttempts,
      backoffMs: this.#o.backoffMs,
      switchUser: this.#o.switchUser,
      maxMinutesOf: (p) => {
        const max = this.#cluster?.info.queues.find((q) => q.name === p)?.maxWallTimeSeconds;
        return max !== undefined ? Math.floor(max / 60) : undefined;
      },
      accounts: o.accounts ?? new AccountResolver(),
      ...(log ? { log } : {}),
    };
    this.#poller = new Poller(this.#o.pollIntervalMs, {
      busy: () => this.#jobs.size > 0,
      // One attempt: the next interval is the retry.
      ask: async () => parseSqueue((await this.#runner.run('squeue', SQUEUE_ARGS, { attempts: 1 })).stdout),
      onAnswer: (q, at) => this.#onQueue(q, at),
      onFailure: (e, streak) => this.#onPollFailure(e, streak),
    });
  }

  /** Prepare the work directory and the job wrapper (compiled on first use). */
  static async create(options: SlurmBackendOptions): Promise<SlurmBackend> {
    await mkdir(options.workDir, { recursive: true });
    const wrapper = await ensureWrapper(options.workDir, options.wrapper ?? 'auto', options.compiler ?? 'cc', (why) =>
      options.log?.warn(
        { why },
        'slurm backend: C job wrapper unavailable, using the sh wrapper (reduced accounting, no memory limit)',
      ),
    );
    return new SlurmBackend(options, wrapper.path);
  }

  clusterInfo(): BatchClusterInfo | undefined {
    if (!this.#closed && (this.#cluster === undefined || Date.now() - this.#cluster.at > this.#o.infoRefreshMs))
      void this.refreshClusterInfo();
    return this.#cluster?.info;
  }

  /** Ask sinfo (and squeue, unless the poll's answer is fresh) now; one refresh at a time. */
  refreshClusterInfo(): Promise<void> {
    this.#clusterRefresh ??= (async () => {
      try {
        const [parts, nodes] = await Promise.all([
          this.#runner.run('sinfo', SINFO_PARTITIONS_ARGS, { attempts: 1 }),
          this.#runner.run('sinfo', SINFO_NODES_ARGS, { attempts: 1 }),
        ]);
        let queue =
          this.#lastQueue && Date.now() - this.#lastQueue.at <= this.#o.infoRefreshMs
            ? this.#lastQueue.queue
            : undefined;
        if (!queue) {
          queue = parseSqueue((await this.#runner.run('squeue', SQUEUE_ARGS, { attempts: 1 })).stdout);
          this.#lastQueue = { queue, at: Date.now() };
        }
        this.#cluster = {
          info: clusterInfo(parsePartitions(parts.stdout), parseNodes(nodes.stdout), queue),
          at: Date.now(),
        };
      } catch (e) {
        this.#o.log?.warn(
          { error: String(e) },
          'slurm: cannot read the cluster information (sinfo); the info document keeps the last one',
        );
      } finally {
        this.#clusterRefresh = undefined;
      }
    })();
    return this.#clusterRefresh;
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#listener = listener;
  }

  submit(spec: BatchJobSpec): Promise<string> {
    if (this.#closed) return Promise.reject(ceError('CE_ERR_LRMS_CLOSED'));
    try {
      validateSpec(spec);
      const problem = slurmSpecProblem(spec);
      if (problem !== undefined) throw ceError('CE_ERR_LRMS_BAD_SPEC', problem);
    } catch (e) {
      return Promise.reject(e);
    }
    const under = this.#submitting.get(spec.lrmsDir);
    if (under) return under;
    const p = this.#doSubmit(spec).finally(() => this.#submitting.delete(spec.lrmsDir));
    this.#submitting.set(spec.lrmsDir, p);
    return p;
  }

  async #doSubmit(spec: BatchJobSpec): Promise<string> {
    // The way to it passable, not listable (as the state directory's lrms folder); the
    // directory itself private, and handed to the job's account when there is one.
    await mkdir(dirname(spec.lrmsDir), { recursive: true, mode: 0o711 });
    await mkdir(spec.lrmsDir, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    const localId = await submitOnce(this.#runner, spec, this.#submit);
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
    const known = this.#jobs.get(localId);
    if (known && known.lrmsDir !== spec.lrmsDir) await this.#idReused(known);
    if (!this.#jobs.has(localId)) {
      const job = this.#track(spec, localId);
      this.#report(job, 'QUEUING', 'PENDING');
    }
    return localId;
  }

  /**
   * Slurm gave a new job the id of one still tracked: the controller lost its saved state
   * (restarted without it), and with it the older job. Its status file may still tell.
   */
  async #idReused(old: Tracked): Promise<void> {
    this.#o.log?.warn(
      { localId: old.localId, job: old.jobId },
      'slurm: a job id was given again; Slurm lost the earlier job of that id',
    );
    this.#jobs.delete(old.localId);
    const done = await readStatus(old.lrmsDir).catch(() => undefined);
    await this.#finish(
      old,
      done
        ? jobReportedOnly(done)
        : lostResult(`Slurm gave its job id ${old.localId} to another job (the controller lost its state)`),
    );
  }

  async recover(refs: readonly BatchJobRef[]): Promise<void> {
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
    for (const ref of refs) {
      if (this.#jobs.has(ref.localId)) continue;
      // Known since always: the next poll says where it is, or finds its end (with
      // Slurm's figures, which a status file read here would lack).
      this.#track(ref, ref.localId, 0);
    }
    this.#poller.soon();
  }

  async cancel(localId: string): Promise<boolean> {
    const job = this.#jobs.get(localId);
    if (!job || this.#closed) return false;
    if (job.ended) return true;
    job.cancelledAt = Date.now();
    job.cancelPending = true;
    await this.#scancel(job);
    return true;
  }

  async #scancel(job: Tracked): Promise<void> {
    // One scancel (with its retries) at a time per job: a poll during a slow one adds none.
    if (job.scancelRunning) return;
    job.scancelRunning = true;
    try {
      await this.#runner.run('scancel', [job.localId]);
      job.cancelPending = false;
    } catch (e) {
      if (e instanceof SlurmCommandError && isUnknownJob(e.message)) {
        job.cancelPending = false; // nothing left to cancel: the poll reports the end
      } else {
        this.#o.log?.warn(
          { localId: job.localId, job: job.jobId, error: String(e) },
          'slurm: scancel failed; retried at the next poll',
        );
      }
    } finally {
      job.scancelRunning = false;
    }
    // The final update waits for Slurm to confirm (the job leaves the queue or reaches a final state).
    this.#poller.soon();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#poller.close();
  }

  #track(ref: { jobId: string; lrmsDir: string }, localId: string, knownSince = Date.now()): Tracked {
    const job: Tracked = {
      localId,
      jobId: ref.jobId,
      lrmsDir: ref.lrmsDir,
      knownSince,
      cancelledAt: 0,
      cancelPending: false,
      scancelRunning: false,
      reported: '',
      endSeenAt: 0,
      checking: false,
      ended: false,
      // Nothing is delivered before the caller has seen submit() resolve.
      chain: chainStart(),
    };
    this.#jobs.set(localId, job);
    this.#poller.wake();
    return job;
  }

  #report(job: Tracked, state: BatchState, native: string, reason?: string): void {
    const key = `${state}/${native}/${reason ?? ''}`;
    if (job.reported === key || job.ended) return;
    job.reported = key;
    this.#queue(job, { kind: 'state', jobId: job.jobId, state, native, ...(reason !== undefined ? { reason } : {}) });
  }

  async #onQueue(queue: ParsedQueue, startedAt: number): Promise<void> {
    this.#lastQueue = { queue, at: Date.now() };
    if (queue.bad.length > 0)
      this.#o.log?.warn(
        { lines: queue.bad.slice(0, 3), count: queue.bad.length },
        'slurm: squeue lines not understood',
      );
    const checks: Promise<void>[] = [];
    for (const job of this.#jobs.values()) {
      if (job.ended) continue;
      const entry = queue.jobs.get(job.localId);
      if (job.cancelPending && (!entry || !FINAL_STATES.has(entry.state))) void this.#scancel(job);
      if (entry && !FINAL_STATES.has(entry.state)) {
        const state = batchState(entry.state, entry.reason);
        // Slurm's reason comes with the same poll (%r): a change of it alone is reported too.
        if (state) this.#report(job, state, entry.state, state === 'RUNNING' ? undefined : pendingReason(entry.reason));
        continue;
      }
      // Over in Slurm, or gone from squeue (purged, or never seen by this instance).
      if (!entry && job.knownSince > startedAt) continue; // submitted after this squeue began
      checks.push(this.#checkEnded(job, entry));
    }
    await Promise.all(checks);
  }

  async #onPollFailure(error: Error, streak: number): Promise<void> {
    if (streak === 1 || streak % 10 === 0) {
      this.#o.log?.warn(
        { error: error.message, failures: streak },
        'slurm: squeue failed; job states are not updated until it answers (ends are still seen from status files)',
      );
    }
    // Slurm cannot tell: the jobs' own status files still can. Read them at most every 5 s,
    // and no more than about one file per millisecond over time (50 s for 50,000 jobs).
    const open = [...this.#jobs.values()].filter((j) => !j.ended && !j.checking);
    const now = Date.now();
    if (now - this.#lastStatusSweep < Math.max(this.#o.pollIntervalMs, 5000, open.length)) return;
    this.#lastStatusSweep = now;
    for (let i = 0; i < open.length && !this.#closed; i += STATUS_BATCH) {
      await Promise.all(
        open.slice(i, i + STATUS_BATCH).map(async (job) => {
          // Slurm cannot be asked: the file is all there is, and only the job's word.
          const done = await readStatus(job.lrmsDir).catch(() => undefined);
          if (done) await this.#finish(job, jobReportedOnly(done));
        }),
      );
    }
  }

  /** Slurm says the job is over (entry) or no longer lists it (no entry): find its result. */
  async #checkEnded(job: Tracked, entry: QueueEntry | undefined): Promise<void> {
    if (job.checking || job.ended) return;
    job.checking = true;
    try {
      const done = await readStatus(job.lrmsDir);
      const now = Date.now();
      if (job.endSeenAt === 0) job.endSeenAt = now;
      if (done) {
        const figures = await this.#slurmFigures(job, now - job.endSeenAt >= this.#o.accountingWaitMs);
        if (figures === 'later') return;
        return await this.#finish(job, withSlurmFigures(done, figures));
      }
      // A job that started writes its status file before it exits; give a shared file system time to show it.
      const started = await exists(`${job.lrmsDir}/${PID_FILE}`);
      if (started && now - job.endSeenAt < this.#o.statusGraceMs) return;
      await this.#finish(job, await this.#resultFromSlurm(job, entry));
    } catch (e) {
      this.#o.log?.warn(
        { err: e, localId: job.localId, job: job.jobId },
        'slurm: cannot find the result of a job; tried again at the next poll',
      );
    } finally {
      job.checking = false;
    }
  }

  async #resultFromSlurm(job: Tracked, entry: QueueEntry | undefined): Promise<BatchResult> {
    const detail = await slurmOutHead(job.lrmsDir);
    try {
      const { stdout } = await this.#runner.run('scontrol', ['show', 'job', '-o', job.localId]);
      const rec = parseScontrolJob(stdout);
      if (rec && FINAL_STATES.has(rec.state))
        return resultFromSlurm(rec, detail, await statusUnwritten(job.lrmsDir, rec));
      if (rec) throw new Error(`Slurm lists job ${job.localId} as ${rec.state} but squeue did not`);
    } catch (e) {
      if (!(e instanceof SlurmCommandError && isUnknownJob(e.message))) throw e;
    }
    // Purged by the controller: accounting (slurmdbd), where there is one, still knows.
    const acct = await this.#runner.run('sacct', sacctArgs(job.localId), { attempts: 1 }).then(
      (r) => parseSacct(r.stdout),
      () => undefined,
    );
    if (acct && FINAL_STATES.has(acct.state))
      return resultFromSlurm(acct, detail, await statusUnwritten(job.lrmsDir, acct));
    const unwritten = await statusUnwritten(job.lrmsDir, undefined);
    if (unwritten !== undefined) return unwrittenResult(unwritten);
    return lostResult(
      entry
        ? `Slurm ended it (${entry.state}) and its job wrapper left no exit status${detail ? `: ${detail}` : ''}`
        : `Slurm no longer knows job ${job.localId} and its job wrapper left no exit status${detail ? `: ${detail}` : ''}`,
    );
  }

  /**
   * What Slurm measured about a job that ended: accounting (sacct) where the cluster keeps
   * it, once the job's end and its batch step have reached it; else the controller's
   * record. 'later': accounting does not have it yet (asked again at the next poll, until
   * `last`); undefined: Slurm has no record (the status file is then the job's word alone).
   */
  async #slurmFigures(job: Tracked, last: boolean): Promise<SlurmFigures | 'later' | undefined> {
    if (await this.#keepsAccounting()) {
      const acct = await this.#runner.run('sacct', sacctArgs(job.localId), { attempts: 1 }).then(
        (r) => parseSacct(r.stdout),
        (e: unknown) => {
          this.#o.log?.warn({ localId: job.localId, error: String(e) }, 'slurm: sacct failed');
          return undefined;
        },
      );
      if (acct && FINAL_STATES.has(acct.state) && acct.batchStep) return acct;
      if (!last) return 'later';
    }
    try {
      const { stdout } = await this.#runner.run('scontrol', ['show', 'job', '-o', job.localId], { attempts: 1 });
      const rec = parseScontrolJob(stdout);
      if (rec && FINAL_STATES.has(rec.state)) return rec;
      // Over for squeue but still completing (the epilog runs): the exit code comes with the end.
      if (rec && !last) return 'later';
    } catch (e) {
      if (!(e instanceof SlurmCommandError && isUnknownJob(e.message)) && !last) return 'later';
    }
    return undefined;
  }

  /** Does the cluster keep accounting (AccountingStorageType other than none)? Asked once; a failed ask is asked again. */
  #keepsAccounting(): Promise<boolean> {
    this.#accounting ??= this.#runner.run('scontrol', ['show', 'config'], { attempts: 1 }).then(
      (r) => {
        const type = /^AccountingStorageType\s*=\s*(\S+)/m.exec(r.stdout)?.[1] ?? 'accounting_storage/none';
        return type !== 'accounting_storage/none';
      },
      (e: unknown) => {
        this.#accounting = undefined;
        this.#o.log?.warn({ error: String(e) }, 'slurm: cannot read the configuration (scontrol show config)');
        return false;
      },
    );
    return this.#accounting;
  }

  async #finish(job: Tracked, result: BatchResult): Promise<void> {
    if (job.ended) return;
    job.ended = true;
    result = afterCancel(result, job.cancelledAt);
    await writeDiag(job.lrmsDir, result).catch((e: unknown) =>
      this.#o.log?.warn({ err: e, job: job.jobId }, 'slurm: cannot write the diag file'),
    );
    this.#queue(job, { kind: 'final', jobId: job.jobId, result });
  }

  #queue(job: Tracked, update: BatchUpdate): void {
    queueUpdate(this.#updates, job, update);
  }
}
