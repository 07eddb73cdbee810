/**
 * The batch backend contract (docs/batch-backends.md). The engine talks to every batch
 * system (the embedded `fork` backend, Slurm later) through this interface only; the
 * backend owns its processes, files and connections, and callers never start processes
 * or batch commands themselves. test/lrms/backend.case.ts is the conformance suite
 * every implementation must pass.
 *
 * Life of a batch job as the backend reports it:
 *
 *   submit(spec) ──▶ local id ──▶ 'state' updates (QUEUING, RUNNING, HELD, ...) ──▶ one 'final' update
 *                                   ▲ cancel(localId) makes the final update come sooner
 *
 * Delivery rules (what the scheduler may rely on):
 *  - Updates go to the single listener registered with `onUpdate`, per job in order;
 *    the backend waits for the listener's promise before the next update of that job.
 *  - No update of a job is delivered before its `submit()` promise has resolved.
 *  - A job's final update is delivered exactly once per backend instance. A job the
 *    backend learnt about through `recover()` is reported again (state, then final) by
 *    the new instance, so a final update whose processing was interrupted by a crash is
 *    not lost: the caller must ignore duplicates from an earlier life (the state machine
 *    refuses them).
 *  - After `close()` no listener is called; batch jobs keep running.
 */
import type { UsageFigure } from '../vocabulary/usage-figures.js';

/**
 * Batch-system state of a job as a backend reports it, in the REST terms of the interface
 * (a backend maps its system's own states onto these; `OTHER` for anything else).
 */
export const BATCH_STATES = ['QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

export interface RuntimeEnvironmentRun {
  /** RTE name, e.g. `ENV/PROXY` (for logs and the diag file). */
  readonly name: string;
  /** Absolute path of the shell script; sourced with `1 <options...>` before the job and `2 <options...>` after it. */
  readonly script: string;
  readonly options: readonly string[];
}

export interface BatchLimits {
  /** Wall-clock limit; exceeding it ends the job with failureReason `wall time limit exceeded`. */
  readonly wallTimeSeconds?: number;
  /** CPU time over all processes of the job; exceeding it: `cpu time limit exceeded`. */
  readonly cpuTimeSeconds?: number;
  /** Resident memory of the whole job; exceeding it: `memory limit exceeded`. */
  readonly memoryBytes?: number;
}

/** Everything a backend needs to run one attempt of a job. Paths are absolute unless said otherwise. */
export interface BatchJobSpec {
  readonly jobId: string;
  /** Working directory of the job; exists and holds the staged inputs. */
  readonly sessionDir: string;
  /**
   * Directory for this attempt's backend files, owned by the backend while the job
   * runs; the backend writes `diag` (A-REX §8.4 key=value accounting) there before the final
   * update. Submitting again with the same directory while it holds a started job does
   * not start a second one: the first job's local id is returned and its end reported
   * (a submit repeated after a crash never runs a job twice). Use an empty directory
   * for a new attempt.
   */
  readonly lrmsDir: string;
  /** Absolute, or relative to the session directory. */
  readonly executable: string;
  readonly arguments: readonly string[];
  /** Session-relative paths; absent: /dev/null. */
  readonly stdin?: string;
  readonly stdout?: string;
  readonly stderr?: string;
  /** Send stderr to stdout's file (xRSL `join`). */
  readonly join?: boolean;
  /** Job environment variables, in order (later wins). */
  readonly environment: readonly { readonly name: string; readonly value: string }[];
  /** Runtime environments in order, resolved to their scripts by the caller. */
  readonly runtimeEnvironments: readonly RuntimeEnvironmentRun[];
  /**
   * The names of every runtime environment the job was accepted with, script or not, in order:
   * a backend that runs an RTE otherwise (Kubernetes: as a container image) selects by name.
   */
  readonly runtimeEnvironmentNames?: readonly string[];
  readonly limits: BatchLimits;
  /** Slots (cores) requested; at least 1. */
  readonly slots: number;
  /** Slots on each host (xRSL countpernode, ADL SlotsPerHost); divides `slots`. Absent: wherever they fit. */
  readonly slotsPerNode?: number;
  /** The job's hosts run nothing else (ADL ExclusiveExecution). Backends of one host ignore it. */
  readonly exclusive?: boolean;
  /** Batch queue / partition; the fork backend has one and ignores it. */
  readonly queue?: string;
  /** Job name for the batch system. */
  readonly name?: string;
  /**
   * The batch settings of the job's route (docs/routes.md), from the configuration only:
   * the partition replaces `queue`; backends without such notions ignore them.
   */
  readonly route?: BatchRoute;
  /**
   * Local account the job runs as (the owner's mapped account, docs/security.md); absent:
   * the service's own user. The backend resolves the name and switches to it itself.
   */
  readonly localAccount?: string;
}

/** A route's batch settings; each absent one is the backend's default. */
export interface BatchRoute {
  readonly name: string;
  readonly partition?: string;
  readonly account?: string;
  readonly qos?: string;
  readonly extraArgs?: readonly string[];
}

/** What identifies a batch job to recover: the local id and the directories of its spec. */
export interface BatchJobRef {
  readonly jobId: string;
  readonly localId: string;
  readonly sessionDir: string;
  readonly lrmsDir: string;
}

/** Exit status and accounting of a batch job that ended. */
export interface BatchResult {
  /** Exit code of the job (128 + n when killed by signal n); null when unknown (job lost). */
  readonly exitCode: number | null;
  /** Signal name when the job's main process was killed by a signal, e.g. `SIGKILL`. */
  readonly signal?: string;
  readonly wallTimeSeconds: number;
  /** User + system CPU time of all processes of the job. */
  readonly cpuTimeSeconds: number;
  readonly userTimeSeconds: number;
  readonly kernelTimeSeconds: number;
  /** Largest resident set of a process of the job (0 when the backend cannot tell). */
  readonly maxRssBytes: number;
  readonly startTime: Date | null;
  readonly endTime: Date | null;
  /** Hosts the job ran on. */
  readonly nodes: readonly string[];
  /**
   * Set when the batch system ended the job rather than the job itself: `cancelled`,
   * `wall time limit exceeded`, `cpu time limit exceeded`, `memory limit exceeded`,
   * `executable not found: <name>`, `job lost: ...`. Absent when the job exited or
   * crashed on its own (see exitCode / signal).
   */
  readonly failureReason?: string;
  /**
   * The figures above that only the job itself reported (its wrapper shares the job's
   * account, so the job could have written them) and the batch system did not measure;
   * absent or empty: every figure is the backend's own.
   */
  readonly jobReported?: readonly UsageFigure[];
}

export type BatchUpdate =
  | {
      readonly kind: 'state';
      readonly jobId: string;
      readonly state: BatchState;
      /** The batch system's own name, e.g. Slurm's `SUSPENDED`. */ readonly native?: string;
      /**
       * Why the batch system does not run the job (yet), in its own words, e.g. Slurm's
       * `Reason` (`Resources`, `Priority`, `QOSMaxJobsPerUserLimit`); absent: none given
       * (a running job). Read in the backend's one poll, never by a command per job;
       * shown to the job's owner, so a backend passes only what concerns this job.
       */
      readonly reason?: string;
    }
  | { readonly kind: 'final'; readonly jobId: string; readonly result: BatchResult };

export type BatchUpdateListener = (localId: string, update: BatchUpdate) => void | Promise<void>;

/** A queue (Slurm partition) as the batch system reports it, for the info document. */
export interface BatchQueueInfo {
  readonly name: string;
  /** False when the batch system does not start jobs from it (partition down, drained, inactive). */
  readonly up: boolean;
  readonly maxWallTimeSeconds?: number;
  readonly defaultWallTimeSeconds?: number;
  /** Slots (CPUs) of its nodes, and of those the ones not allocated. */
  readonly totalSlots: number;
  readonly freeSlots: number;
  /** Memory of its largest node: the most one slot of a job can ever have there. */
  readonly largestNodeMemoryBytes?: number;
  /**
   * The most slots one job can have, when less than `totalSlots` (Kubernetes: a pod runs on
   * one node, so the largest schedulable node's CPUs); absent: `totalSlots`.
   */
  readonly maxSlotsPerJob?: number;
  /** The most memory one job can have in all, where a job runs on one node (Kubernetes: the largest schedulable node's). */
  readonly maxJobMemoryBytes?: number;
  /**
   * Where a job runs on one node (Kubernetes): each schedulable node's whole CPUs and memory,
   * as pairs (those another node exceeds in both left out). A job must fit one node with its
   * slots and its memory together: the most CPUs and the most memory may be two nodes'.
   */
  readonly nodeShapes?: readonly NodeShape[];
  /** Jobs of all users the batch system runs or keeps waiting in it. */
  readonly runningJobs: number;
  readonly waitingJobs: number;
}

/** One node's room for one job: its whole allocatable CPUs and its allocatable memory. */
export interface NodeShape {
  readonly slots: number;
  readonly memoryBytes: number;
}

/**
 * The machines jobs run on, when the batch system describes them (Kubernetes's nodes): the
 * info document's ExecutionEnvironment then says this instead of the service's own host.
 */
export interface BatchExecutionEnvironment {
  /** GLUE2 Platform, e.g. `amd64`. */
  readonly platform?: string;
  /** CPUs of the largest node a job can have. */
  readonly logicalCpus?: number;
  readonly mainMemoryBytes?: number;
  /** GLUE2 OSFamily, e.g. `linux`. */
  readonly osFamily?: string;
}

/** What the batch system says about itself (cached by the backend; see `clusterInfo`). */
export interface BatchClusterInfo {
  readonly totalSlots: number;
  readonly freeSlots: number;
  readonly totalNodes: number;
  /** Absent: the jobs' machines are described by the service's host (fork, Slurm, Grid Engine). */
  readonly executionEnvironment?: BatchExecutionEnvironment;
  readonly queues: readonly BatchQueueInfo[];
}

export interface BatchBackend {
  /** Backend name as configured (`fork`, `slurm`). */
  readonly name: string;

  /** Register the one listener for state and final updates. Call before submit/recover. */
  onUpdate(listener: BatchUpdateListener): void;

  /**
   * Hand a job to the batch system; resolves with its local id once the batch system
   * has accepted it. Rejects with a CeError (CE_ERR_LRMS_*) when it could not be
   * submitted; a job that was accepted but cannot start (e.g. missing executable)
   * resolves and then reports a final update with a failureReason.
   *
   * `signal`: the job was killed while its submission waits. A backend that honours it
   * rejects with CE_ERR_LRMS_SUBMIT_WITHDRAWN when the signal fired before its submission
   * command started (waiting for a command slot, its files not yet written), and only
   * then: nothing of the attempt reached the batch system. A submission already under way
   * (or one of an earlier life found in the batch system) resolves as usual, and the
   * caller cancels it. A backend may ignore the signal (its submissions end at once).
   */
  submit(spec: BatchJobSpec, options?: { readonly signal?: AbortSignal }): Promise<string>;

  /**
   * A job is running once its `submit()` has resolved (the fork backend: its process has
   * started). The engine then records it as RUNNING at once, in the transaction that
   * records the submission, and a later RUNNING update changes nothing.
   */
  readonly runsOnSubmit?: boolean;

  /**
   * Submissions the backend runs at once (its submission command's concurrency bound);
   * absent: no bound (a submission ends at once, as the fork backend's). The engine hands
   * over at most twice this many jobs whose `submit()` has not resolved yet, and keeps the
   * others waiting in its own fair-share order: a job handed over waits for the command
   * in the backend's queue, first come first served, so a deep queue there would put a
   * newcomer behind every job handed over before it, whatever its share.
   */
  readonly submitConcurrency?: number;

  /**
   * Take over jobs submitted by an earlier instance (after a service restart): report
   * each one's current state, then its final update when it ends (at once if it
   * already has). A job that vanished without an exit status ends with failureReason
   * `job lost: ...`. Jobs this instance already tracks are ignored.
   */
  recover(jobs: readonly BatchJobRef[]): Promise<void>;

  /**
   * Stop a job (every process of it). Resolves true when its final update (failureReason
   * `cancelled`, unless it ended by itself first) is still to come; false when this
   * instance does not know the job or has already delivered its final update, in which
   * case no update follows.
   */
  cancel(localId: string): Promise<boolean>;

  /**
   * The job's files are about to be removed (clean, end of its session lifetime), its
   * final update long delivered: stop anything of it that still runs (e.g. a daemon
   * that outlived the job) and drop what the backend keeps for it. Optional.
   */
  release?(job: Pick<BatchJobRef, 'jobId' | 'lrmsDir'>): Promise<void>;

  /**
   * The batch system's queues, slots and job counts for the info document, from a cache
   * the backend refreshes in the background (asking starts a refresh when it is stale);
   * undefined until the first answer. Optional: absent, the service describes its own host.
   */
  clusterInfo?(): BatchClusterInfo | undefined;

  /**
   * Ask the batch system for `clusterInfo` now; resolves once it answered or failed (the
   * backend logs why). The start awaits it before the service says it is ready, so that
   * the first info document and the first submission's checks of the queues' limits have
   * the batch system's answer. Optional, with `clusterInfo`.
   */
  refreshClusterInfo?(): Promise<void>;

  /** Stop watching and release the backend's own resources; batch jobs keep running. */
  close(): Promise<void>;

  /**
   * Whether new jobs can be submitted now (the health endpoint's readiness): undefined
   * when usable, else why not (closed, working directory not writable, batch system
   * not answering). Cheap: called on every readiness probe. Optional (absent: usable).
   */
  usable?(): Promise<string | undefined>;
}
