/**
 * The `gridengine` batch backend: jobs go to a Grid Engine cell with `qsub -terse`
 * (queues as queues), their states come from ONE `qstat -u '*' -xml` per poll interval
 * for all jobs, their ends from the status file the shared job wrapper writes into the
 * lrms directory, else from `qacct`, else "lost". A cancel is `qdel`, confirmed by the
 * job leaving qstat. A job in error state (Eqw: Grid Engine cannot start it) is ended
 * with qstat's error reason and deleted. Design: docs/batch-backends.md, "Grid Engine".
 *
 *   submit ──qsub -terse──▶ ge.sh ─exec─▶ wrapper (claims lrmsDir) ─▶ job.sh ─▶ executable
 *                                              └─▶ lrmsDir/status, diag (the end)
 *   poll ──qstat -xml (all jobs)──▶ state updates; a job gone ──▶ status file, qacct, or lost
 */
import { chown, lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AccountResolver } from '../../accounts/resolve-account.js';
import { ceError } from '../../errors/ce-error.js';
import { USAGE_FIGURES } from '../../vocabulary/usage-figures.js';
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
import type { BackendLog } from '../core/backend-log.js';
import type { BatchCommandObserver } from '../core/command-observer.js';
import { writeDiag } from '../core/diag-file.js';
import { JOB_SCRIPT, PID_FILE, lostResult, readStatus, writeAtomic } from '../core/job-files.js';
import { jobScript, validateSpec } from '../core/job-script.js';
import { placeWrapper, switchUserPrefix } from '../core/lrms-dir.js';
import { Poller } from '../core/poller.js';
import { afterCancel } from '../core/cancel-result.js';
import { chainStart, queueUpdate, type UpdateTarget } from '../core/update-chain.js';
import { ensureWrapper, type WrapperKind } from '../core/wrapper-build.js';
import { geBatchState } from './ge-state.js';
import { GE_FILES, batchScript, geOutHead, parseJobNumber, readJobNumber } from './job-files.js';
import {
  QSTAT_ARGS,
  QSTAT_QUEUES_ARGS,
  clusterInfo,
  errorReason,
  isUnknownJob,
  parseQacct,
  parseQstatXml,
  parseQueueSummary,
  type GeJob,
} from './qstat.js';
import { GridEngineCommandError, GridEngineRunner } from './run-command.js';

export interface GridEngineBackendOptions {
  /** The backend's own directory (the compiled wrapper lives in `bin/`). */
  readonly workDir: string;
  readonly sgeRoot?: string;
  readonly sgeCell?: string;
  readonly qmasterPort?: number;
  readonly execdPort?: number;
  /** Directory of qsub/qstat/...; empty: PATH. */
  readonly binDir?: string;
  readonly jobNamePrefix?: string;
  /** Queue for jobs that name none; empty: Grid Engine chooses. */
  readonly defaultQueue?: string;
  readonly pollIntervalMs?: number;
  readonly commandTimeoutMs?: number;
  readonly commandAttempts?: number;
  readonly backoffMs?: number;
  readonly maxConcurrentCommands?: number;
  readonly infoRefreshMs?: number;
  /** After a started job left qstat, how long its status file (or its qacct record) may take to appear. */
  readonly statusGraceMs?: number;
  readonly wrapper?: 'auto' | WrapperKind;
  readonly compiler?: string;
  readonly jobPath?: string;
  readonly killGraceSeconds?: number;
  readonly sampleIntervalMs?: number;
  readonly switchUser?: 'runuser';
  readonly accounts?: AccountResolver;
  readonly log?: BackendLog;
  readonly commands?: BatchCommandObserver;
}

interface Tracked {
  readonly localId: string;
  readonly jobId: string;
  readonly lrmsDir: string;
  /** When this instance began to track it: a qstat begun earlier may not list it yet. */
  readonly knownSince: number;
  cancelledAt: number;
  /** Why Grid Engine could not start it (Eqw), once known: the job is deleted and ends with it. */
  errorReason: string | undefined;
  reported: string;
  goneSince: number;
  checking: boolean;
  ended: boolean;
  chain: Promise<void>;
}

const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );

type Settings = Required<Omit<GridEngineBackendOptions, 'log' | 'wrapper' | 'compiler' | 'commands' | 'accounts'>>;

export class GridEngineBackend implements BatchBackend {
  readonly name = 'gridengine';
  readonly #o: Settings;
  readonly #log: BackendLog | undefined;
  readonly #accounts: AccountResolver;
  readonly #wrapperPath: string;
  readonly #runner: GridEngineRunner;
  readonly #poller: Poller<Map<string, GeJob>>;
  readonly #jobs = new Map<string, Tracked>();
  readonly #submitting = new Map<string, Promise<string>>();
  #listener: BatchUpdateListener | undefined;
  #closed = false;
  readonly #updates: UpdateTarget<Tracked> = {
    name: 'gridengine',
    jobs: this.#jobs,
    listener: () => this.#listener,
    closed: () => this.#closed,
    log: () => this.#log,
  };
  /** The last qstat answer and when it came (the info document's job counts). */
  #lastJobs = { jobs: new Map<string, GeJob>(), at: 0 };
  #cluster: { info: BatchClusterInfo; at: number } | undefined;
  #clusterRefresh: Promise<void> | undefined;

  private constructor(o: GridEngineBackendOptions, wrapperPath: string) {
    this.#o = {
      workDir: o.workDir,
      sgeRoot: o.sgeRoot ?? '',
      sgeCell: o.sgeCell ?? '',
      qmasterPort: o.qmasterPort ?? 0,
      execdPort: o.execdPort ?? 0,
      binDir: o.binDir ?? '',
      jobNamePrefix: o.jobNamePrefix ?? 'ceres-',
      defaultQueue: o.defaultQueue ?? '',
      pollIntervalMs: o.pollIntervalMs ?? 1000,
      commandTimeoutMs: o.commandTimeoutMs ?? 30_000,
      commandAttempts: o.commandAttempts ?? 6,
      backoffMs: o.backoffMs ?? 1000,
      maxConcurrentCommands: o.maxConcurrentCommands ?? 4,
      infoRefreshMs: o.infoRefreshMs ?? 30_000,
      statusGraceMs: o.statusGraceMs ?? 10_000,
      jobPath: o.jobPath ?? '/usr/local/bin:/usr/bin:/bin',
      killGraceSeconds: o.killGraceSeconds ?? 10,
      sampleIntervalMs: o.sampleIntervalMs ?? 1000,
      switchUser: o.switchUser ?? 'runuser',
    };
    this.#log = o.log;
    this.#accounts = o.accounts ?? new AccountResolver();
    this.#wrapperPath = wrapperPath;
    this.#runner = new GridEngineRunner(
      {
        binDir: this.#o.binDir,
        timeoutMs: this.#o.commandTimeoutMs,
        attempts: this.#o.commandAttempts,
        backoffMs: this.#o.backoffMs,
        maxConcurrent: this.#o.maxConcurrentCommands,
        ...(o.log ? { log: o.log } : {}),
        ...(o.commands ? { commands: o.commands } : {}),
      },
      this.#o,
    );
    this.#poller = new Poller(this.#o.pollIntervalMs, {
      busy: () => this.#jobs.size > 0,
      // One attempt: the next interval is the retry.
      ask: async () => parseQstatXml((await this.#runner.run('qstat', QSTAT_ARGS, { attempts: 1 })).stdout),
      onAnswer: (jobs, at) => this.#onQstat(jobs, at),
      onFailure: async (e, streak) => {
        if (streak === 1 || streak % 10 === 0)
          this.#log?.warn(
            { error: e.message, failures: streak },
            'gridengine: qstat failed; job states are not updated until it answers',
          );
      },
    });
  }

  /** Prepare the work directory and the job wrapper (compiled on first use). */
  static async create(options: GridEngineBackendOptions): Promise<GridEngineBackend> {
    await mkdir(options.workDir, { recursive: true });
    const wrapper = await ensureWrapper(options.workDir, options.wrapper ?? 'auto', options.compiler ?? 'cc', (why) =>
      options.log?.warn({ why }, 'gridengine backend: C job wrapper unavailable, using the sh wrapper'),
    );
    return new GridEngineBackend(options, wrapper.path);
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#listener = listener;
  }

  clusterInfo(): BatchClusterInfo | undefined {
    if (!this.#closed && (this.#cluster === undefined || Date.now() - this.#cluster.at > this.#o.infoRefreshMs))
      void this.refreshClusterInfo();
    return this.#cluster?.info;
  }

  /** Ask `qstat -g c` now (the jobs from the last poll, or one qstat -xml); one refresh at a time. */
  refreshClusterInfo(): Promise<void> {
    this.#clusterRefresh ??= (async () => {
      try {
        const summary = parseQueueSummary((await this.#runner.run('qstat', QSTAT_QUEUES_ARGS, { attempts: 1 })).stdout);
        const jobs =
          Date.now() - this.#lastJobs.at <= this.#o.infoRefreshMs
            ? this.#lastJobs.jobs
            : parseQstatXml((await this.#runner.run('qstat', QSTAT_ARGS, { attempts: 1 })).stdout);
        this.#cluster = { info: clusterInfo(summary, jobs), at: Date.now() };
      } catch (e) {
        this.#log?.warn({ error: String(e) }, 'gridengine: cannot read the queues (qstat -g c); the last figures stay');
      } finally {
        this.#clusterRefresh = undefined;
      }
    })();
    return this.#clusterRefresh;
  }

  submit(spec: BatchJobSpec): Promise<string> {
    if (this.#closed) return Promise.reject(ceError('CE_ERR_LRMS_CLOSED'));
    try {
      validateSpec(spec);
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
    await mkdir(dirname(spec.lrmsDir), { recursive: true, mode: 0o711 });
    await mkdir(spec.lrmsDir, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    // Submitted before (this attempt's number recorded): that job, never a second one.
    const localId = (await readJobNumber(spec.lrmsDir)) ?? (await this.#qsub(spec));
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
    if (!this.#jobs.has(localId)) {
      const job = this.#track(spec, localId);
      this.#report(job, 'QUEUING', 'qw');
    }
    return localId;
  }

  async #qsub(spec: BatchJobSpec): Promise<string> {
    await writeAtomic(`${spec.lrmsDir}/${JOB_SCRIPT}`, jobScript(spec));
    await writeAtomic(`${spec.lrmsDir}/${GE_FILES.script}`, batchScript(spec, this.#o));
    await placeWrapper(this.#wrapperPath, `${spec.lrmsDir}/${GE_FILES.wrapper}`);
    if (spec.localAccount !== undefined) {
      // Refuses root and accounts below the site's minimum uid; the wrapper, running as
      // the account, writes pid, status and diag here.
      const { uid, gid } = await this.#accounts.resolve(spec.localAccount);
      await chown(spec.lrmsDir, uid, gid);
    }
    const queue = spec.queue ?? this.#o.defaultQueue;
    const args = [
      '-terse',
      ...['-S', '/bin/sh', '-N', `${this.#o.jobNamePrefix}${spec.jobId}`.replace(/[^\w.-]/g, '_')],
      ...['-o', `${spec.lrmsDir}/${GE_FILES.out}`, '-j', 'y', '-wd', spec.sessionDir],
      // Never re-run on another host (the wrapper's claim would refuse it anyway), no mail.
      ...['-r', 'n', '-m', 'n'],
      ...(queue ? ['-q', queue] : []),
      `${spec.lrmsDir}/${GE_FILES.script}`,
    ];
    try {
      const { stdout } = await this.#runner.run('qsub', args, {
        prefix: switchUserPrefix(this.#o.switchUser, spec.localAccount),
      });
      const id = parseJobNumber(stdout);
      if (id === undefined) throw new Error(`qsub answered no job number: ${JSON.stringify(stdout.slice(0, 200))}`);
      await writeAtomic(`${spec.lrmsDir}/${GE_FILES.id}`, `${id}\n`);
      return id;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw ceError('CE_ERR_LRMS_SUBMIT_FAILED', `qsub failed: ${msg.replace(/^qsub: /, '')}`, { cause: e });
    }
  }

  async recover(refs: readonly BatchJobRef[]): Promise<void> {
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED');
    for (const ref of refs) if (!this.#jobs.has(ref.localId)) this.#track(ref, ref.localId, 0);
    this.#poller.soon();
  }

  async cancel(localId: string): Promise<boolean> {
    const job = this.#jobs.get(localId);
    if (!job || this.#closed) return false;
    if (job.ended) return true;
    job.cancelledAt = Date.now();
    await this.#qdel(job);
    return true;
  }

  /** qdel; the final update waits for Grid Engine to confirm (the job leaves qstat). */
  async #qdel(job: Tracked): Promise<void> {
    try {
      await this.#runner.run('qdel', [job.localId]);
    } catch (e) {
      // Unknown: already gone, which the next poll reports.
      if (!(e instanceof GridEngineCommandError && isUnknownJob(e.message)))
        this.#log?.warn(
          { localId: job.localId, error: String(e) },
          'gridengine: qdel failed; asked again at the next poll',
        );
    }
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
      errorReason: undefined,
      reported: '',
      goneSince: 0,
      checking: false,
      ended: false,
      chain: chainStart(),
    };
    this.#jobs.set(localId, job);
    this.#poller.wake();
    return job;
  }

  #report(job: Tracked, state: BatchState, native: string): void {
    const key = `${state}/${native}`;
    if (job.reported === key || job.ended) return;
    job.reported = key;
    queueUpdate(this.#updates, job, { kind: 'state', jobId: job.jobId, state, native });
  }

  async #onQstat(jobs: Map<string, GeJob>, startedAt: number): Promise<void> {
    this.#lastJobs = { jobs, at: Date.now() };
    const checks: Promise<void>[] = [];
    for (const job of this.#jobs.values()) {
      if (job.ended) continue;
      const entry = jobs.get(job.localId);
      if (entry) {
        // A cancel not yet taken (qdel failed): asked again.
        if (job.cancelledAt > 0 && !entry.state.includes('d')) void this.#qdel(job);
        const state = geBatchState(entry.state);
        if (state === 'error') checks.push(this.#onError(job));
        else this.#report(job, state, entry.state);
        continue;
      }
      if (job.knownSince > startedAt) continue; // submitted after this qstat began
      checks.push(this.#checkEnded(job));
    }
    await Promise.all(checks);
  }

  /** Eqw: Grid Engine will not start the job; its reason is kept and the job deleted (it ends when qstat confirms). */
  async #onError(job: Tracked): Promise<void> {
    if (job.errorReason !== undefined || job.checking) return;
    job.checking = true;
    try {
      const said = await this.#runner
        .run('qstat', ['-j', job.localId], { attempts: 1 })
        .then((r) => errorReason(r.stdout))
        .catch(() => '');
      job.errorReason = `Grid Engine could not start the job (Eqw)${said ? `: ${said}` : ''}`;
      this.#report(job, 'OTHER', 'Eqw');
      await this.#qdel(job);
    } finally {
      job.checking = false;
    }
  }

  /** The job left qstat: its status file, else qacct, else lost (after the grace for either to appear). */
  async #checkEnded(job: Tracked): Promise<void> {
    if (job.checking || job.ended) return;
    job.checking = true;
    try {
      const done = await readStatus(job.lrmsDir);
      // The wrapper's report is the job's word (it ran as the job's account).
      if (done) return await this.#finish(job, { ...done, jobReported: [...USAGE_FIGURES] });
      const now = Date.now();
      if (job.goneSince === 0) job.goneSince = now;
      const late = now - job.goneSince >= this.#o.statusGraceMs;
      if (job.errorReason !== undefined)
        return await this.#finish(job, { ...lostResult(''), failureReason: job.errorReason });
      // A started job writes its status file before it exits; the accounting record also lags.
      if (!late && (await exists(`${job.lrmsDir}/${PID_FILE}`))) return;
      const acct = await this.#runner
        .run('qacct', ['-j', job.localId], { attempts: 1 })
        .then((r) => parseQacct(r.stdout))
        .catch(() => undefined);
      if (acct === undefined && !late) return;
      const out = await geOutHead(job.lrmsDir);
      await this.#finish(
        job,
        acct !== undefined
          ? lostResult(
              `the job wrapper left no exit status (Grid Engine: failed ${acct.failed}${acct.failedText ? ` ${acct.failedText}` : ''}, exit status ${acct.exitStatus})${out ? `: ${out}` : ''}`,
            )
          : lostResult(
              `Grid Engine no longer knows job ${job.localId} and its job wrapper left no exit status${out ? `: ${out}` : ''}`,
            ),
      );
    } catch (e) {
      this.#log?.warn({ err: e, localId: job.localId }, 'gridengine: cannot find the result of a job; tried again');
    } finally {
      job.checking = false;
    }
  }

  async #finish(job: Tracked, result: BatchResult): Promise<void> {
    if (job.ended) return;
    job.ended = true;
    result = afterCancel(result, job.cancelledAt);
    await writeDiag(job.lrmsDir, result).catch((e: unknown) =>
      this.#log?.warn({ err: e, job: job.jobId }, 'gridengine: cannot write the diag file'),
    );
    queueUpdate(this.#updates, job, { kind: 'final', jobId: job.jobId, result } satisfies BatchUpdate);
  }
}
