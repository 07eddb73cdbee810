/**
 * The job fields the state machine owns, and what each state means. Pure: no I/O, no
 * clock. The names and their REST mapping live in src/vocabulary/job-states.ts; the
 * transitions in ./state-machine.ts.
 *
 * Internal states (A-REX's grid-manager names, written to `status` files and the
 * `state` column) and what may happen in each:
 *
 *   ACCEPTED           stored, not yet picked up (REST ACCEPTING); the scheduler picks it
 *                      up into PREPARING, or holds it (PENDING:ACCEPTED) while a limit is full
 *   PENDING:ACCEPTED   held before stage-in by a limit (REST ACCEPTED); released into PREPARING
 *   PREPARING          stage-in running (REST PREPARING); ends in SUBMIT, PENDING:PREPARING
 *                      (no batch slot), FINISHING (no executable, or stage-in failed)
 *   PENDING:PREPARING  stage-in done, held before submission (REST PREPARED)
 *   SUBMIT             handing the job to the batch backend (REST SUBMITTING); a kill is
 *                      deferred until the backend has answered
 *   INLRMS             in the batch system; the backend's sub-state QUEUING / RUNNING / HELD /
 *                      EXITINGLRMS / OTHER is the REST state
 *   PENDING:INLRMS     batch job ended, held before stage-out (REST EXECUTED)
 *   FINISHING          stage-out running (REST FINISHING), in success, failure or cancel mode
 *   CANCELING          stopping what runs for a killed or failed job (REST KILLING): the batch
 *                      job or the stage-in; ends in FINISHING
 *   FINISHED           final (REST FINISHED, FAILED or KILLED by `outcome`); may be restarted
 *                      (failed or killed, reruns left), cleaned, or expire into DELETED
 *   DELETED            session lifetime over, data wiped, minimal record kept (REST WIPED)
 *
 * Invariants of a MachineState (checked by `checkInvariants`, asserted in tests):
 *  - `pending` only in ACCEPTED, PREPARING, INLRMS;
 *  - `lrmsState` is set exactly in non-pending INLRMS;
 *  - `outcome` is null before the job leaves the processing path and set from the
 *    moment it enters CANCELING or FINISHING (or PENDING:INLRMS), so that stage-out
 *    knows its mode; FINISHED/DELETED always have one;
 *  - `failedState`/`failedCause`/`failureReason` are set together, by the first failure
 *    only, and only when `outcome` is failed or killed.
 */
import { ceError } from '../errors/ce-error.js';
import type { JobRecord } from '../store/job-record.js';
import {
  FAILED_CAUSES,
  FINAL_STATES,
  INTERNAL_STATES,
  LRMS_SUB_STATES,
  OUTCOMES,
  PENDABLE_STATES,
  restState,
  type FailedCause,
  type InternalState,
  type LrmsSubState,
  type Outcome,
  type RestState,
} from '../vocabulary/job-states.js';

/**
 * The job fields the state machine reads and writes. Names and meanings are those of
 * the job store's columns (src/store/job-record.ts), so a transition persists as
 * a plain column update (see `persistedFields`).
 */
export interface MachineState {
  readonly state: InternalState;
  readonly pending: boolean;
  /** Batch sub-state while INLRMS (not pending); null otherwise. */
  readonly lrmsState: LrmsSubState | null;
  /** Decided when the job leaves the processing path; final from FINISHED on. */
  readonly outcome: Outcome | null;
  /** State in which the first failure (or the kill) happened; drives restart. */
  readonly failedState: InternalState | null;
  readonly failedCause: FailedCause | null;
  /** Readable reason of the first failure. */
  readonly failureReason: string | null;
  /** Request flags set by the REST actions; the machine clears a flag when it acts on it. */
  readonly killRequested: boolean;
  readonly cleanRequested: boolean;
  readonly restartRequested: boolean;
  readonly rerunsLeft: number;
  /** Batch-system id of the current attempt. */
  readonly localId: string | null;
  /** Exit code reported by the batch backend for the current attempt. */
  readonly exitCode: number | null;
}

export function isFinal(s: Pick<MachineState, 'state'>): boolean {
  return FINAL_STATES.includes(s.state);
}

/** A new job as stored at submission: ACCEPTED, not pending, REST ACCEPTING. */
export function initialState(rerunsLeft: number): MachineState {
  return {
    state: 'ACCEPTED',
    pending: false,
    lrmsState: null,
    outcome: null,
    failedState: null,
    failedCause: null,
    failureReason: null,
    killRequested: false,
    cleanRequested: false,
    restartRequested: false,
    rerunsLeft,
    localId: null,
    exitCode: null,
  };
}

/** The job fields of a transition's result, plus the derived REST state, as store columns. */
export type PersistedFields = {
  -readonly [K in keyof MachineState]: MachineState[K];
} & { restState: RestState };

/**
 * Every machine-owned field and the REST state: the column update for a transition.
 * Always the same key set, so the store can reuse one prepared statement.
 */
export function persistedFields(s: MachineState): PersistedFields {
  return {
    state: s.state,
    pending: s.pending,
    lrmsState: s.lrmsState,
    outcome: s.outcome,
    failedState: s.failedState,
    failedCause: s.failedCause,
    failureReason: s.failureReason,
    killRequested: s.killRequested,
    cleanRequested: s.cleanRequested,
    restartRequested: s.restartRequested,
    rerunsLeft: s.rerunsLeft,
    localId: s.localId,
    exitCode: s.exitCode,
    restState: restState(s),
  };
}

/** The stored fields as read back (strings for the enumerations): the record's own. */
export type StoredMachineFields = Pick<JobRecord, keyof MachineState>;

function member<T extends string>(values: readonly T[], v: string | null, field: string, nullable: boolean): T | null {
  if (v === null) {
    if (nullable) return null;
  } else if ((values as readonly string[]).includes(v)) {
    return v as T;
  }
  throw ceError('CE_ERR_ENGINE_BAD_RECORD', `Job record has an invalid ${field}`);
}

/**
 * Typed view of a stored job (e.g. a JobRecord). Throws CE_ERR_ENGINE_BAD_RECORD when
 * a field holds something the machine never writes, or an invariant is broken.
 */
export function machineStateOf(r: StoredMachineFields): MachineState {
  const s: MachineState = {
    state: member(INTERNAL_STATES, r.state, 'state', false) as InternalState,
    pending: r.pending,
    lrmsState: member(LRMS_SUB_STATES, r.lrmsState, 'batch state', true),
    outcome: member(OUTCOMES, r.outcome, 'outcome', true),
    failedState: member(INTERNAL_STATES, r.failedState, 'failed state', true),
    failedCause: member<FailedCause>(FAILED_CAUSES, r.failedCause, 'failure cause', true),
    failureReason: r.failureReason,
    killRequested: r.killRequested,
    cleanRequested: r.cleanRequested,
    restartRequested: r.restartRequested,
    rerunsLeft: r.rerunsLeft,
    localId: r.localId,
    exitCode: r.exitCode,
  };
  const broken = checkInvariants(s);
  if (broken !== undefined) throw ceError('CE_ERR_ENGINE_BAD_RECORD', `Job record is inconsistent: ${broken}`);
  return s;
}

/** The first broken invariant (see the module comment), or undefined. */
export function checkInvariants(s: MachineState): string | undefined {
  if (s.pending && !PENDABLE_STATES.includes(s.state)) return `${s.state} cannot be pending`;
  const inLrms = s.state === 'INLRMS' && !s.pending;
  if (inLrms !== (s.lrmsState !== null)) return 'batch state is set exactly while in the batch system';
  const decided =
    s.state === 'CANCELING' || s.state === 'FINISHING' || isFinal(s) || (s.state === 'INLRMS' && s.pending);
  if (decided !== (s.outcome !== null)) return 'outcome is set exactly once the job left the processing path';
  const failure = [s.failedState, s.failedCause, s.failureReason].filter((v) => v !== null).length;
  if (failure !== 0 && failure !== 3) return 'failure fields are set together';
  if (failure === 3 && s.outcome === 'success') return 'a successful job has no failure';
  if (failure === 0 && (s.outcome === 'failed' || s.outcome === 'killed'))
    return 'a failed or killed job records its failure';
  if (!Number.isInteger(s.rerunsLeft) || s.rerunsLeft < 0) return 'reruns left is a non-negative integer';
  return undefined;
}
