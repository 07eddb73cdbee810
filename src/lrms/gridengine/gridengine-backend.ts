/**
 * The `gridengine` batch backend: jobs go to a Grid Engine cell with `qsub -terse`
 * (queues as queues; each attempt exactly once, ./submission.ts), their states come from
 * ONE `qstat -u '*' -xml` per poll interval for all jobs, their ends from the status file the shared job wrapper writes into the
 * lrms directory, else from `qacct`, else "lost". A cancel is `qdel`, confirmed by the
 * job leaving qstat. A job in error state (Eqw: Grid Engine cannot start it) is ended
 * with qstat's error reason and deleted. Design: docs/batch-backends.md, "Grid Engine".
 *
 *   submit ──qsub -terse──▶ ge.sh ─exec─▶ wrapper (claims lrmsDir) ─▶ job.sh ─▶ executable
 *                                              └─▶ lrmsDir/status, diag (the end)
 *   poll ──qstat -xml (all jobs)──▶ state updates; a job gone ──▶ status file, qacct, or lost
 */
import { lstat } from 'node:fs/promises';
import { AccountResolver } from '../../accounts/resolve-account.js';
import { USAGE_FIGURES } from '../../vocabulary/usage-figures.js';
import type { BatchBackend, BatchClusterInfo, BatchJobRef, BatchJobSpec, BatchUpdateListener } from '../backend.js';
import type { BackendLog } from '../core/backend-log.js';
import { pollingSettings, prepareWorkDir, runnerOptions, type PollingBackendOptions } from '../core/backend-options.js';
import { PID_FILE, lostResult, readStatus } from '../core/job-files.js';
import { ClusterInfoCache } from '../core/cluster-info-cache.js';
import { JobTable, type Tracked } from '../core/job-table.js';
import { makeLrmsDir } from '../core/lrms-dir.js';
import { Poller } from '../core/poller.js';
import { geCommandDir } from './command-dir.js';
import { geBatchState, geReason } from './ge-state.js';
import { geOutHead } from './job-files.js';
import {
  QSTAT_ARGS,
  QSTAT_QUEUES_ARGS,
  clusterInfo,
  errorReason,
  isUnknownJob,
  parseQacct,
  parseQstatXml,
  parseQhost,
  parseQueueSummary,
  type GeJob,
} from './qstat.js';
import { GridEngineCommandError, GridEngineRunner } from './run-command.js';
import { submitOnce, type SubmitSettings } from './submission.js';

export interface GridEngineBackendOptions extends PollingBackendOptions {
  readonly sgeRoot?: string;
  readonly sgeCell?: string;
  readonly qmasterPort?: number;
  readonly execdPort?: number;
  /** Queue for jobs that name none; empty: Grid Engine chooses. */
  readonly defaultQueue?: string;
}

/** What the Grid Engine backend keeps of a job beside the core's (../core/job-table.ts). */
interface GeJobState {
  /** Why Grid Engine could not start it (Eqw), once known: the job is deleted and ends with it. */
  errorReason: string | undefined;
  /** When a poll first missed it from qstat (0: listed so far). */
  goneSince: number;
}
type Job = Tracked<GeJobState>;

const exists = (p: string): Promise<boolean> =>
  lstat(p).then(
    () => true,
    () => false,
  );

type Settings = Required<Omit<GridEngineBackendOptions, 'log' | 'wrapper' | 'compiler' | 'commands' | 'accounts'>>;

export class GridEngineBackend implements BatchBackend {
  readonly name = 'gridengine';
  /** qsub shares the command runner's bound (lrms.gridengine.maxConcurrentCommands). */
  readonly submitConcurrency: number;
  readonly #o: Settings;
  readonly #log: BackendLog | undefined;
  readonly #submit: SubmitSettings;
  readonly #runner: GridEngineRunner;
  readonly #poller: Poller<Map<string, GeJob>>;
  readonly #table: JobTable<GeJobState> = new JobTable({
    name: 'gridengine',
    extra: () => ({ errorReason: undefined, goneSince: 0 }),
    watch: () => this.#poller.wake(),
    log: () => this.#log,
  });
  /** The last qstat answer and when it came (the info document's job counts). */
  #lastJobs = { jobs: new Map<string, GeJob>(), at: 0 };
  readonly #cluster: ClusterInfoCache;

  private constructor(o: GridEngineBackendOptions, wrapperPath: string) {
    this.#o = {
      ...pollingSettings(o),
      sgeRoot: o.sgeRoot ?? '',
      sgeCell: o.sgeCell ?? '',
      qmasterPort: o.qmasterPort ?? 0,
      execdPort: o.execdPort ?? 0,
      defaultQueue: o.defaultQueue ?? '',
    };
    this.#log = o.log;
    this.submitConcurrency = this.#o.maxConcurrentCommands;
    this.#submit = { ...this.#o, wrapperPath, accounts: o.accounts ?? new AccountResolver(), log: o.log };
    this.#runner = new GridEngineRunner(runnerOptions(this.#o, o), this.#o);
    this.#cluster = new ClusterInfoCache({
      maxAgeMs: this.#o.infoRefreshMs,
      ask: () => this.#askCluster(),
      failed: (e) =>
        this.#log?.warn({ error: String(e) }, 'gridengine: cannot read the queues (qstat -g c); the last figures stay'),
      closed: () => this.#table.closed,
    });
    this.#poller = new Poller(this.#o.pollIntervalMs, {
      busy: () => this.#table.jobs.size > 0,
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
    // Not through Debian's per-call wrapper where Grid Engine's own directory is there (./command-dir.ts).
    const binDir = await geCommandDir(options.binDir ?? '', options.sgeRoot ?? '');
    return new GridEngineBackend({ ...options, binDir }, await prepareWorkDir(options, 'gridengine'));
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#table.onUpdate(listener);
  }

  clusterInfo(): BatchClusterInfo | undefined {
    return this.#cluster.current();
  }

  /** Ask `qstat -g c` now; one refresh at a time. */
  refreshClusterInfo(): Promise<void> {
    return this.#cluster.refresh();
  }

  /** The queue figures (`qstat -g c`), the execution hosts (`qhost`) and the jobs of the last poll, or of one qstat -xml. */
  async #askCluster(): Promise<BatchClusterInfo> {
    const [queues, hosts] = await Promise.all([
      this.#runner.run('qstat', QSTAT_QUEUES_ARGS, { attempts: 1 }),
      this.#runner.run('qhost', [], { attempts: 1 }),
    ]);
    const summary = parseQueueSummary(queues.stdout);
    const jobs =
      Date.now() - this.#lastJobs.at <= this.#o.infoRefreshMs
        ? this.#lastJobs.jobs
        : parseQstatXml((await this.#runner.run('qstat', QSTAT_ARGS, { attempts: 1 })).stdout);
    return clusterInfo(summary, jobs, parseQhost(hosts.stdout));
  }

  submit(spec: BatchJobSpec): Promise<string> {
    return this.#table.submit(spec, async () => {
      await makeLrmsDir(spec.lrmsDir);
      const localId = await submitOnce(this.#runner, spec, this.#submit);
      this.#table.submitted(spec, localId, 'qw');
      return localId;
    });
  }

  async recover(refs: readonly BatchJobRef[]): Promise<void> {
    this.#table.recover(refs);
    this.#poller.soon();
  }

  cancel(localId: string): Promise<boolean> {
    return this.#table.cancel(localId, (job) => this.#qdel(job));
  }

  /** qdel; the final update waits for Grid Engine to confirm (the job leaves qstat). */
  async #qdel(job: Job): Promise<void> {
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
    this.#table.close();
    this.#poller.close();
  }

  /**
   * One pass over the table with the poll's answer: a job listed is reported (only a change
   * makes an update), one gone is looked at for its end. Per job a map lookup and a few
   * comparisons, nothing allocated while nothing changes (20,000 jobs each interval).
   */
  async #onQstat(jobs: Map<string, GeJob>, startedAt: number): Promise<void> {
    this.#lastJobs = { jobs, at: Date.now() };
    const checks: Promise<void>[] = [];
    this.#table.forEachOpen((job) => {
      const entry = jobs.get(job.localId);
      if (entry) {
        // A cancel not yet taken (qdel failed): asked again.
        if (job.cancelledAt > 0 && !entry.state.includes('d')) void this.#qdel(job);
        const state = geBatchState(entry.state);
        if (state === 'error') checks.push(this.#onError(job));
        else this.#table.report(job, state, entry.state, geReason(entry.state));
        return;
      }
      if (job.knownSince > startedAt) return; // submitted after this qstat began
      checks.push(this.#checkEnded(job));
    });
    await Promise.all(checks);
  }

  /** Eqw: Grid Engine will not start the job; its reason is kept and the job deleted (it ends when qstat confirms). */
  #onError(job: Job): Promise<void> {
    if (job.errorReason !== undefined) return Promise.resolve();
    return this.#table.check(job, async () => {
      const said = await this.#runner
        .run('qstat', ['-j', job.localId], { attempts: 1 })
        .then((r) => errorReason(r.stdout))
        .catch(() => '');
      job.errorReason = `Grid Engine could not start the job (Eqw)${said ? `: ${said}` : ''}`;
      this.#table.report(job, 'OTHER', 'Eqw', geReason('Eqw'));
      await this.#qdel(job);
    });
  }

  /** The job left qstat: its status file, else qacct, else lost (after the grace for either to appear). */
  #checkEnded(job: Job): Promise<void> {
    return this.#table.check(job, async () => {
      const done = await readStatus(job.lrmsDir);
      // The wrapper's report is the job's word (it ran as the job's account).
      if (done) return await this.#table.finish(job, { ...done, jobReported: [...USAGE_FIGURES] });
      const now = Date.now();
      if (job.goneSince === 0) job.goneSince = now;
      const late = now - job.goneSince >= this.#o.statusGraceMs;
      if (job.errorReason !== undefined)
        return await this.#table.finish(job, { ...lostResult(''), failureReason: job.errorReason });
      // A started job writes its status file before it exits; the accounting record also lags.
      if (!late && (await exists(`${job.lrmsDir}/${PID_FILE}`))) return;
      const acct = await this.#runner
        .run('qacct', ['-j', job.localId], { attempts: 1 })
        .then((r) => parseQacct(r.stdout))
        .catch(() => undefined);
      if (acct === undefined && !late) return;
      const out = await geOutHead(job.lrmsDir);
      await this.#table.finish(
        job,
        acct !== undefined
          ? lostResult(
              `the job wrapper left no exit status (Grid Engine: failed ${acct.failed}${acct.failedText ? ` ${acct.failedText}` : ''}, exit status ${acct.exitStatus})${out ? `: ${out}` : ''}`,
            )
          : lostResult(
              `Grid Engine no longer knows job ${job.localId} and its job wrapper left no exit status${out ? `: ${out}` : ''}`,
            ),
      );
    });
  }
}
