/**
 * The one job model. Both description languages (ADL and xRSL) are parsed into this
 * shape exactly once, at submission; the job store keeps it as JSON and the engine,
 * staging and the batch backends read it from there. Nothing else parses descriptions.
 *
 * Invariants:
 * - plain data only (strings, numbers, booleans, arrays, plain objects): JSON round-trips
 *   it unchanged, so a stored job reads back identical;
 * - units are normalised once: durations in seconds, sizes in bytes (memory and disk are
 *   whole MiB, because that is the granularity A-REX hands to the batch system);
 * - optional scalars are absent (never `undefined`-valued keys, never 0 as "unset");
 *   list fields are always present, possibly empty;
 * - file names are as the description gave them (session-relative); the acceptance
 *   checks refuse names that leave the session directory.
 * docs/job-descriptions.md documents every field and where it comes from. A leaf (in the
 * vocabulary, not in src/jobdesc): the store below the domain services keeps it.
 */

import type { InternalState } from './job-states.js';

export type SourceFormat = 'adl' | 'xrsl';

/** Grid-manager states a notification can be sent on (xRSL flags b q f e d c, ADL OnState): all but SUBMIT. */
export type NotifyState = Exclude<InternalState, 'SUBMIT'>;

/** A replica location for a file, with its own URL options. */
export interface FileLocation {
  url: string;
  options?: Record<string, string>;
}

export interface InputFile {
  /** Session-relative name. */
  name: string;
  /** URL the service downloads from; absent = the client uploads the file into the session. */
  source?: string;
  /** Exact size in bytes of a client-uploaded file (xRSL `size[.checksum]` source). */
  size?: number;
  /** Checksum of a client-uploaded file as given (xRSL `size.checksum`). */
  checksum?: string;
  /** Made executable in the session (xRSL `executables`, ADL `IsExecutable`). */
  executable: boolean;
  /** Delegation used for this transfer, overriding the job's main delegation. */
  delegationId?: string;
  /** URL options of the source (`threads`, `cache`, ...). */
  options?: Record<string, string>;
  /** Further replicas of the source. */
  locations?: FileLocation[];
}

export interface OutputFileOptions {
  /** Upload (or keep) when the job succeeded. Default true. */
  useIfSuccess: boolean;
  /** Upload (or keep) when the job failed. Default false. */
  useIfFailure: boolean;
  /** Upload (or keep) when the job was cancelled. Default false. */
  useIfCancel: boolean;
  /** ADL `Mandatory`: failure to upload fails the job. */
  mandatory?: boolean;
  /** ADL `CreationFlag`; `append` is refused by the acceptance checks. */
  creationFlag?: 'overwrite' | 'append' | 'dontOverwrite';
}

export interface OutputFile {
  /**
   * Session-relative name. `/` keeps the whole session directory; a name starting with
   * `@` names a file in the session that lists further outputs (`name URL` per line).
   */
  name: string;
  /** URL the service uploads to; absent = kept in the session for the client to fetch. */
  target?: string;
  delegationId?: string;
  options: OutputFileOptions;
  /** URL options of the target. */
  urlOptions?: Record<string, string>;
  /** Further replicas / targets. */
  locations?: FileLocation[];
}

export interface RuntimeEnvironmentRequest {
  /**
   * Identifier matched against the configured runtime environments: the xRSL value as
   * written, or ADL `Name` joined with `Version` by `-` (`APPS/HEP/ATLAS-1.0`).
   */
  name: string;
  /** Options passed to the RTE script, in order. */
  options: string[];
  /** xRSL relation other than `=` (a version constraint A-REX cannot resolve). */
  constraint?: '!=' | '<' | '>' | '<=' | '>=';
  /** ADL `optional="true"`: a missing RTE does not fail the job. */
  optional?: boolean;
}

export interface Notification {
  states: NotifyState[];
  recipients: string[];
}

export interface AccessControl {
  /** `GACL`, `ARC`, or absent (then the policy type is recognised from the content). */
  type?: string;
  /** The policy document (XML text); absent when the ACL element had no `Content`. */
  content?: string;
}

/** ADL Pre/PostExecutable (parsed so they can be refused with A-REX's text). */
export interface ExecutableCommand {
  path: string;
  arguments: string[];
  expectedExitCode?: number;
}

export type GridManagerAction = 'request' | 'cancel' | 'clean' | 'renew' | 'restart';

export interface JobDescription {
  sourceFormat: SourceFormat;
  jobName?: string;
  /** Program to run; absent = a staging-only job that never reaches the batch system. */
  executable?: string;
  arguments: string[];
  /** Exit code that means success (ADL `FailIfExitCodeNotEqualTo`). Default 0. */
  expectedExitCode: number;
  stdin?: string;
  stdout?: string;
  stderr?: string;
  /** stdout and stderr go to the same file (then `stdout === stderr`). */
  join: boolean;
  /** Environment variables, in order, duplicates kept (the last one wins in the job). */
  environment: Array<[string, string]>;
  inputFiles: InputFile[];
  outputFiles: OutputFile[];
  /** ADL `ClientDataPush`: the client announces the end of stage-in itself. */
  clientDataPush: boolean;
  queue?: string;
  wallTimeSeconds?: number;
  /** Total CPU time over all slots. */
  cpuTimeSeconds?: number;
  /** Physical memory per slot. */
  memoryBytes?: number;
  virtualMemoryBytes?: number;
  diskBytes?: number;
  /** Number of slots (xRSL `count`, ADL `NumberOfSlots`). */
  count?: number;
  /** Slots per node (xRSL `countpernode`, ADL `SlotsPerHost`). */
  countPerNode?: number;
  exclusiveExecution?: boolean;
  runtimeEnvironments: RuntimeEnvironmentRequest[];
  /** Main delegation for all transfers without their own. */
  delegationId?: string;
  /** How long results are kept after the job finished. */
  lifetimeSeconds?: number;
  /** Allowed restarts. */
  rerun?: number;
  notify: Notification[];
  /** Session subdirectory for the service's per-job logs (xRSL `gmlog`). */
  logDir?: string;
  /** 1..100 (A-REX default 50 when absent). */
  priority?: number;
  /** Accept, then fail the job instead of running it. */
  dryRun: boolean;
  /** Do not start before this instant (ISO 8601, UTC). */
  startTime?: string;
  accessControl?: AccessControl;
  /** Accounting (SGAS) destinations. */
  jobReportUrls: string[];
  /** Credential renewal service. */
  credentialServer?: string;
  preExecutables: ExecutableCommand[];
  postExecutables: ExecutableCommand[];
  /** Requested coprocessor (refused by the acceptance checks). */
  coprocessor?: string;
  /** xRSL grid-manager `action`; only `request` is acceptable for a new job. */
  action?: GridManagerAction;
}

/** A description with every list present and nothing else set; parsers start from it. */
export function emptyJobDescription(sourceFormat: SourceFormat): JobDescription {
  return {
    sourceFormat,
    arguments: [],
    expectedExitCode: 0,
    join: false,
    environment: [],
    inputFiles: [],
    outputFiles: [],
    clientDataPush: false,
    runtimeEnvironments: [],
    notify: [],
    dryRun: false,
    jobReportUrls: [],
    preExecutables: [],
    postExecutables: [],
  };
}
