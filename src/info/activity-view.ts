/**
 * What the per-job GLUE2 ComputingActivity publishes about one job: a plain value
 * the job service maps from its job record at request time (so the document is
 * never stale). Optional fields that are absent make their element absent; nothing
 * is defaulted or guessed by the builder.
 */
import type { TimeValue } from './glue2-values.js';
import type { InternalState, LrmsState, RestState } from '../vocabulary/job-states.js';

export type JobDescriptionLanguage = 'emies:adl' | 'nordugrid:xrsl';

export interface ActivityView {
  /** Job id (the REST id). */
  readonly id: string;
  /** Job name from the description. */
  readonly name?: string;
  /** Language the job was submitted in. */
  readonly descriptionLanguage?: JobDescriptionLanguage;

  /** The live REST state (published as `arcrest:<state>`, the one the clients read). */
  readonly restState: RestState;
  /** Internal state, and whether it is held back (A-REX `PENDING:`). */
  readonly gmState: InternalState;
  readonly pending?: boolean;
  /** Batch-system state while INLRMS. */
  readonly lrmsState?: LrmsState;
  /** State the job failed (or was killed) in; present while the failure stands. Gives RestartState. */
  readonly failedState?: InternalState;
  /**
   * Failure reasons, oldest first (A-REX's `failed` file). Each line of each reason
   * becomes one `Error` element; blank lines are dropped.
   */
  readonly failureReasons?: readonly string[];
  /** Exit code of the job's executable. */
  readonly exitCode?: number;
  /** Exit code reported by the batch system, when it differs in meaning. */
  readonly lrmsExitCode?: number;
  /** Position in the batch queue. */
  readonly waitingPosition?: number;

  /** Owner's subject DN (end-entity, proxy links stripped). */
  readonly ownerDn?: string;
  /** Local account the job runs as. */
  readonly localOwner?: string;
  /** The owner's verified VOMS FQANs at submission (published as OtherInfo `VOMSFQAN=`). */
  readonly fqans?: readonly string[];

  readonly requestedWallTimeSeconds?: number;
  readonly requestedCpuTimeSeconds?: number;
  readonly requestedSlots?: number;
  /** Requested runtime environments, as named in the description (`APPS/FOO-1.0`). */
  readonly requestedRuntimeEnvironments?: readonly string[];

  /** Session-relative paths as given in the description; absent when the job named none. */
  readonly stdin?: string;
  readonly stdout?: string;
  readonly stderr?: string;
  /** The job's log directory in the session (xRSL `gmlog`, ADL LogDir). */
  readonly logDir?: string;

  readonly executionNodes?: readonly string[];
  readonly queue?: string;
  /** Batch-system job id (for `fork`: the process id). */
  readonly localId?: string;

  /** Wall time used, already multiplied by the slots (A-REX: WallTime × slots). */
  readonly usedWallTimeSeconds?: number;
  readonly usedCpuTimeSeconds?: number;
  /** Memory used in kB (what getrusage / cgroups report); published as MB, rounded up. */
  readonly usedMemoryKb?: number;
  /**
   * The elements whose values only the job itself reported (`UsedTotalCPUTime`, ...): the
   * batch system did not measure them (docs/security.md). Published as OtherInfo
   * `ReportedByJob=<names, comma-separated>`; absent or empty: none.
   */
  readonly reportedByJob?: readonly string[];

  readonly submissionTime?: TimeValue;
  /** When the batch system accepted the job. */
  readonly lrmsSubmissionTime?: TimeValue;
  /** When the job started running in the batch system. */
  readonly startTime?: TimeValue;
  /** When the batch system reported the job done. */
  readonly lrmsEndTime?: TimeValue;
  /** When the job reached its final state (FINISHED/FAILED/KILLED). */
  readonly endTime?: TimeValue;
  /** When the session directory will be removed. */
  readonly workingAreaEraseTime?: TimeValue;
  /** When the job's delegated credential expires. */
  readonly proxyExpirationTime?: TimeValue;

  /** Client address as the server saw it. */
  readonly submissionHost?: string;
  /** Client software name, when the client told. */
  readonly submissionClientName?: string;

  /**
   * Delegation ids the job uses. An empty list means "no delegation" and adds an
   * OtherMessages note that data staging runs without credentials; absent = unknown.
   */
  readonly delegationIds?: readonly string[];
  /** Further free-text notes for the user. */
  readonly otherMessages?: readonly string[];
}

/** Per-request context of the ComputingActivity. */
export interface ActivityContext {
  /** Host name in the GLUE2 ids (same as the service document's). */
  readonly hostname: string;
  /** When the document is made (CreationTime). */
  readonly now: TimeValue;
  /** Validity in seconds; default 60. */
  readonly validitySeconds?: number;
}
