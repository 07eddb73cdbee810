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
import { lstat } from 'node:fs/promises';
import { ceError } from '../../errors/ce-error.js';
import type {
  BatchBackend,
  BatchClusterInfo,
  BatchJobRef,
  BatchJobSpec,
  BatchResult,
  BatchUpdateListener,
} from '../backend.js';
import { PID_FILE, lostResult, readStatus } from '../core/job-files.js';
import { ClusterInfoCache } from '../core/cluster-info-cache.js';
import { JobTable, type Tracked } from '../core/job-table.js';
import { makeLrmsDir } from '../core/lrms-dir.js';
import type { BackendLog } from '../core/backend-log.js';
import { pollingSettings, prepareWorkDir, runnerOptions, type PollingBackendOptions } from '../core/backend-options.js';
import { resultFromSlurm, statusUnwritten, unwrittenResult } from './job-result.js';
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

export interface SlurmBackendOptions extends PollingBackendOptions {
  /** SLURM_CONF for the Slurm commands; empty: the environment's. */
  readonly slurmConf?: string;
  readonly defaultPartition?: string;
  /**
   * Where the cluster keeps accounting (slurmdbd): how long after a job's end its record
   * may take to reach sacct before the controller's figures are used instead.
   */
  readonly accountingWaitMs?: number;
  readonly extraSbatchArgs?: readonly string[];
}

/** What the Slurm backend keeps of a job beside the core's (../core/job-table.ts). */
interface SlurmJob {
  /** scancel has not been confirmed as sent: retried at each poll. */
  cancelPending: boolean;
  scancelRunning: boolean;
  /** When a poll first saw the job over (or gone) without a status file. */
  endSeenAt: number;
}
type Job = Tracked<SlurmJob>;

const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );
/** Jobs whose status files are read concurrently while Slurm cannot be asked. */
const STATUS_BATCH = 64;

export class SlurmBackend implements BatchBackend {
  readonly name = 'slurm';
  /** sbatch shares the command runner's bound (lrms.slurm.maxConcurrentCommands). */
  readonly submitConcurrency: number;
  readonly #o: Required<Omit<SlurmBackendOptions, 'log' | 'wrapper' | 'compiler' | 'commands' | 'accounts'>> & {
    log: BackendLog | undefined;
  };
  readonly #runner: SlurmRunner;
  readonly #submit: SubmitSettings;
  readonly #poller: Poller<ParsedQueue>;
  readonly #table: JobTable<SlurmJob> = new JobTable({
    name: 'slurm',
    extra: () => ({ cancelPending: false, scancelRunning: false, endSeenAt: 0 }),
    watch: () => this.#poller.wake(),
    log: () => this.#o.log,
  });
  /** The last squeue answer (for the info document); undefined before the first. */
  #lastQueue: { queue: ParsedQueue; at: number } | undefined;
  readonly #cluster: ClusterInfoCache;
  /** When the status files were last read because squeue failed. */
  #lastStatusSweep = 0;
  /** Whether the cluster keeps accounting (asked once; undefined until known). */
  #accounting: Promise<boolean> | undefined;

  private constructor(o: SlurmBackendOptions, wrapperPath: string) {
    this.#o = {
      ...pollingSettings(o),
      slurmConf: o.slurmConf ?? '',
      defaultPartition: o.defaultPartition ?? '',
      accountingWaitMs: o.accountingWaitMs ?? 30_000,
      extraSbatchArgs: o.extraSbatchArgs ?? [],
      log: o.log,
    };
    const log = this.#o.log;
    this.submitConcurrency = this.#o.maxConcurrentCommands;
    this.#runner = new SlurmRunner({ ...runnerOptions(this.#o, o), slurmConf: this.#o.slurmConf });
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
        const max = this.#cluster.last?.queues.find((q) => q.name === p)?.maxWallTimeSeconds;
        return max !== undefined ? Math.floor(max / 60) : undefined;
      },
      accounts: o.accounts ?? new AccountResolver(),
      ...(log ? { log } : {}),
    };
    this.#cluster = new ClusterInfoCache({
      maxAgeMs: this.#o.infoRefreshMs,
      ask: () => this.#askCluster(),
      failed: (e) =>
        log?.warn(
          { error: String(e) },
          'slurm: cannot read the cluster information (sinfo); the info document keeps the last one',
        ),
      closed: () => this.#table.closed,
    });
    this.#poller = new Poller(this.#o.pollIntervalMs, {
      busy: () => this.#table.jobs.size > 0,
      // One attempt: the next interval is the retry.
      ask: async () => parseSqueue((await this.#runner.run('squeue', SQUEUE_ARGS, { attempts: 1 })).stdout),
      onAnswer: (q, at) => this.#onQueue(q, at),
      onFailure: (e, streak) => this.#onPollFailure(e, streak),
    });
  }

  /** Prepare the work directory and the job wrapper (compiled on first use). */
  static async create(options: SlurmBackendOptions): Promise<SlurmBackend> {
    return new SlurmBackend(options, await prepareWorkDir(options, 'slurm'));
  }

  clusterInfo(): BatchClusterInfo | undefined {
    return this.#cluster.current();
  }

  /** Ask sinfo (and squeue, unless the poll's answer is fresh) now; one refresh at a time. */
  refreshClusterInfo(): Promise<void> {
    return this.#cluster.refresh();
  }

  async #askCluster(): Promise<BatchClusterInfo> {
    const [parts, nodes] = await Promise.all([
      this.#runner.run('sinfo', SINFO_PARTITIONS_ARGS, { attempts: 1 }),
      this.#runner.run('sinfo', SINFO_NODES_ARGS, { attempts: 1 }),
    ]);
    let queue =
      this.#lastQueue && Date.now() - this.#lastQueue.at <= this.#o.infoRefreshMs ? this.#lastQueue.queue : undefined;
    if (!queue) {
      queue = parseSqueue((await this.#runner.run('squeue', SQUEUE_ARGS, { attempts: 1 })).stdout);
      this.#lastQueue = { queue, at: Date.now() };
    }
    return clusterInfo(parsePartitions(parts.stdout), parseNodes(nodes.stdout), queue);
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#table.onUpdate(listener);
  }

  submit(spec: BatchJobSpec, options: { readonly signal?: AbortSignal } = {}): Promise<string> {
    const check = (s: BatchJobSpec): void => {
      const problem = slurmSpecProblem(s);
      if (problem !== undefined) throw ceError('CE_ERR_LRMS_BAD_SPEC', problem);
    };
    return this.#table.submit(
      spec,
      async () => {
        await makeLrmsDir(spec.lrmsDir);
        const localId = await submitOnce(this.#runner, spec, this.#submit, options.signal);
        const known = this.#table.jobs.get(localId);
        if (!this.#table.closed && known && known.lrmsDir !== spec.lrmsDir) await this.#idReused(known);
        this.#table.submitted(spec, localId, 'PENDING');
        return localId;
      },
      check,
    );
  }

  /**
   * Slurm gave a new job the id of one still tracked: the controller lost its saved state
   * (restarted without it), and with it the older job. Its status file may still tell.
   */
  async #idReused(old: Job): Promise<void> {
    this.#o.log?.warn(
      { localId: old.localId, job: old.jobId },
      'slurm: a job id was given again; Slurm lost the earlier job of that id',
    );
    this.#table.jobs.delete(old.localId);
    const done = await readStatus(old.lrmsDir).catch(() => undefined);
    await this.#table.finish(
      old,
      done
        ? jobReportedOnly(done)
        : lostResult(`Slurm gave its job id ${old.localId} to another job (the controller lost its state)`),
    );
  }

  async recover(refs: readonly BatchJobRef[]): Promise<void> {
    // The next poll says where each is, or finds its end (with Slurm's figures, which a
    // status file read here would lack).
    this.#table.recover(refs);
    this.#poller.soon();
  }

  cancel(localId: string): Promise<boolean> {
    return this.#table.cancel(localId, (job) => {
      job.cancelPending = true;
      return this.#scancel(job);
    });
  }

  async #scancel(job: Job): Promise<void> {
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
    this.#table.close();
    this.#poller.close();
  }

  async #onQueue(queue: ParsedQueue, startedAt: number): Promise<void> {
    this.#lastQueue = { queue, at: Date.now() };
    if (queue.bad.length > 0)
      this.#o.log?.warn(
        { lines: queue.bad.slice(0, 3), count: queue.bad.length },
        'slurm: squeue lines not understood',
      );
    const checks: Promise<void>[] = [];
    for (const job of this.#table.open()) {
      const entry = queue.jobs.get(job.localId);
      if (job.cancelPending && (!entry || !FINAL_STATES.has(entry.state))) void this.#scancel(job);
      if (entry && !FINAL_STATES.has(entry.state)) {
        const state = batchState(entry.state, entry.reason);
        // Slurm's reason comes with the same poll (%r): a change of it alone is reported too.
        if (state)
          this.#table.report(job, state, entry.state, state === 'RUNNING' ? undefined : pendingReason(entry.reason));
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
    const open = this.#table.open().filter((j) => !j.checking);
    const now = Date.now();
    if (now - this.#lastStatusSweep < Math.max(this.#o.pollIntervalMs, 5000, open.length)) return;
    this.#lastStatusSweep = now;
    for (let i = 0; i < open.length && !this.#table.closed; i += STATUS_BATCH) {
      await Promise.all(
        open.slice(i, i + STATUS_BATCH).map(async (job) => {
          // Slurm cannot be asked: the file is all there is, and only the job's word.
          const done = await readStatus(job.lrmsDir).catch(() => undefined);
          if (done) await this.#table.finish(job, jobReportedOnly(done));
        }),
      );
    }
  }

  /** Slurm says the job is over (entry) or no longer lists it (no entry): find its result. */
  #checkEnded(job: Job, entry: QueueEntry | undefined): Promise<void> {
    return this.#table.check(job, async () => {
      const done = await readStatus(job.lrmsDir);
      const now = Date.now();
      if (job.endSeenAt === 0) job.endSeenAt = now;
      if (done) {
        const figures = await this.#slurmFigures(job, now - job.endSeenAt >= this.#o.accountingWaitMs);
        if (figures === 'later') return;
        return await this.#table.finish(job, withSlurmFigures(done, figures));
      }
      // A job that started writes its status file before it exits; give a shared file system time to show it.
      const started = await exists(`${job.lrmsDir}/${PID_FILE}`);
      if (started && now - job.endSeenAt < this.#o.statusGraceMs) return;
      await this.#table.finish(job, await this.#resultFromSlurm(job, entry));
    });
  }

  async #resultFromSlurm(job: Job, entry: QueueEntry | undefined): Promise<BatchResult> {
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
  async #slurmFigures(job: Job, last: boolean): Promise<SlurmFigures | 'later' | undefined> {
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
}
