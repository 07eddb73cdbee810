/**
 * What the composition root hands the scheduler (src/service/engine.ts): the store, the
 * ports it drives (batch backend, staging, sessions, credential copies), limits and
 * lifetimes, and the observers it tells of each change.
 */
import type { BatchBackend } from '../../lrms/backend.js';
import type { JobStore } from '../../store/job-store.js';
import type { JobRecord } from '../../store/job-record.js';
import type { ControlDir } from '../../store/control-dir.js';
import type { Position } from '../../vocabulary/job-states.js';
import type { Limits } from './slots.js';
import type { SessionsPort, StagingPort } from './ports.js';
import type { ShareSettings } from './share-chooser.js';

export interface SchedulerLog {
  debug(o: object, m: string): void;
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

export interface SchedulerOptions {
  readonly store: JobStore;
  readonly control: ControlDir;
  readonly backend: BatchBackend;
  readonly staging: StagingPort;
  readonly limits: Limits;
  /** Fair share and route limits for the hand-over to the batch system; absent: the users in turn. */
  readonly shares?: ShareSettings | undefined;
  readonly log: SchedulerLog;
  /** Session directories: checked and link-safe (session-dirs.ts); the plain path only for the batch backend. */
  readonly sessions: SessionsPort;
  /** Root for per-attempt backend directories. */
  readonly lrmsJobsRoot: string;
  readonly rteScripts: ReadonlyMap<string, string | undefined>;
  /** The account of jobs stored without one, on a root service (batch-spec.ts). */
  readonly defaultAccount?: string | undefined;
  readonly serviceUrl: () => string;
  /** Default and maximum session lifetime after the job ended (seconds). */
  readonly sessionLifetimeSeconds: number;
  readonly maxSessionLifetimeSeconds: number;
  /** How long the minimal record of a wiped job stays (seconds). */
  readonly wipedRetentionSeconds: number;
  readonly cancelTimeoutSeconds: number;
  /** Lifetime sweep period (ms). */
  readonly sweepIntervalMs?: number;
  /**
   * Least time between two scans for parked jobs whose next look at their uploads is due
   * (ms; default 1000). Parked jobs come due spread over the poll interval, so one scan
   * per second bounds the scans; tests shorten it to see a due look without waiting.
   */
  readonly parkScanMs?: number;
  /** A job run reached a final state (persisted): its accounting record is written here. */
  readonly onEnded?: (job: JobRecord) => Promise<unknown>;
  readonly now?: () => number;
  /**
   * Told of every change of a job's position, after it is persisted (metrics), with when
   * the job entered `from` (undefined: not known, a job stored before entry times were).
   */
  readonly onTransition?: (t: {
    readonly id: string;
    readonly from: Position;
    readonly to: Position;
    readonly final: boolean;
    readonly enteredAt: number | undefined;
  }) => void;
  /** The job's copy of its delegated credential (src/accounts/job-credentials.ts); absent: none is given. */
  readonly credentials?: JobCredentialsPort;
  /**
   * A job that asked for a log directory (xRSL `gmlog`) changed state: its `errors` lines are
   * written; called before the step's effects (stage-out keeps the directory, src/jobs/gmlog.ts).
   */
  readonly onLogged?: (job: JobRecord) => Promise<void>;
}

/** What the scheduler asks of the job credential copies. */
export interface JobCredentialsPort {
  /** Places the copy for the batch run; the environment entries naming it. */
  place(
    jobId: string,
    delegationId: string | null,
    owner: string,
    account: string | undefined,
  ): Promise<{ name: string; value: string }[]>;
  remove(jobId: string): Promise<void>;
}
