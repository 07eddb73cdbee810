/**
 * The job states, their REST names and the job fields the state machine owns.
 * Pure: no I/O, no clock. The transitions live in ./state-machine.ts.
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

/** Internal job states. Names are those of src/info/job-states.ts `GmState`. */
export const InternalState = {
  ACCEPTED: 'ACCEPTED',
  PREPARING: 'PREPARING',
  SUBMIT: 'SUBMIT',
  INLRMS: 'INLRMS',
  FINISHING: 'FINISHING',
  FINISHED: 'FINISHED',
  CANCELING: 'CANCELING',
  DELETED: 'DELETED',
} as const;
export type InternalState = (typeof InternalState)[keyof typeof InternalState];
export const INTERNAL_STATES: readonly InternalState[] = Object.values(InternalState);

/** REST job states (spec §3). Names are those of src/info/job-states.ts `RestState`. */
export const RestState = {
  ACCEPTING: 'ACCEPTING',
  ACCEPTED: 'ACCEPTED',
  PREPARING: 'PREPARING',
  PREPARED: 'PREPARED',
  SUBMITTING: 'SUBMITTING',
  QUEUING: 'QUEUING',
  RUNNING: 'RUNNING',
  HELD: 'HELD',
  EXITINGLRMS: 'EXITINGLRMS',
  OTHER: 'OTHER',
  EXECUTED: 'EXECUTED',
  FINISHING: 'FINISHING',
  FINISHED: 'FINISHED',
  FAILED: 'FAILED',
  KILLING: 'KILLING',
  KILLED: 'KILLED',
  WIPED: 'WIPED',
} as const;
export type RestState = (typeof RestState)[keyof typeof RestState];
export const REST_STATES: readonly RestState[] = Object.values(RestState);

/** Batch-system sub-state of an INLRMS job, as reported by the backend (also its REST state). */
export const LrmsSubState = {
  QUEUING: 'QUEUING',
  RUNNING: 'RUNNING',
  HELD: 'HELD',
  EXITINGLRMS: 'EXITINGLRMS',
  OTHER: 'OTHER',
} as const;
export type LrmsSubState = (typeof LrmsSubState)[keyof typeof LrmsSubState];
export const LRMS_SUB_STATES: readonly LrmsSubState[] = Object.values(LrmsSubState);

/** How a job ends: FINISHED, FAILED or KILLED in REST; also the stage-out mode. */
export const Outcome = { SUCCESS: 'success', FAILED: 'failed', KILLED: 'killed' } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];
export const OUTCOMES: readonly Outcome[] = Object.values(Outcome);

/** Who caused a failure (A-REX `failedcause`): `client` for a kill, else `internal`. */
export const FailedCause = { INTERNAL: 'internal', CLIENT: 'client' } as const;
export type FailedCause = (typeof FailedCause)[keyof typeof FailedCause];

/** States that may carry the pending flag. */
export const PENDABLE_STATES: readonly InternalState[] = ['ACCEPTED', 'PREPARING', 'INLRMS'];
/** States in which all activity of the job has ended. */
export const FINAL_STATES: readonly InternalState[] = ['FINISHED', 'DELETED'];

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

/** A state with its pending flag, as written in status files: `INLRMS`, `PENDING:INLRMS`. */
export type Position =
  | 'ACCEPTED'
  | 'PENDING:ACCEPTED'
  | 'PREPARING'
  | 'PENDING:PREPARING'
  | 'SUBMIT'
  | 'INLRMS'
  | 'PENDING:INLRMS'
  | 'FINISHING'
  | 'FINISHED'
  | 'CANCELING'
  | 'DELETED';

export const POSITIONS: readonly Position[] = [
  'ACCEPTED',
  'PENDING:ACCEPTED',
  'PREPARING',
  'PENDING:PREPARING',
  'SUBMIT',
  'INLRMS',
  'PENDING:INLRMS',
  'FINISHING',
  'CANCELING',
  'FINISHED',
  'DELETED',
];

export function positionOf(s: Pick<MachineState, 'state' | 'pending'>): Position {
  return (s.pending ? `PENDING:${s.state}` : s.state) as Position;
}

/** The (state, pending) pair of a position. */
export function splitPosition(p: Position): { state: InternalState; pending: boolean } {
  return p.startsWith('PENDING:') ? { state: p.slice(8) as InternalState, pending: true } : { state: p as InternalState, pending: false };
}

export function isFinal(s: Pick<MachineState, 'state'>): boolean {
  return s.state === 'FINISHED' || s.state === 'DELETED';
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

const FINISHED_REST: Readonly<Record<Outcome, RestState>> = { success: 'FINISHED', failed: 'FAILED', killed: 'KILLED' };

/**
 * The REST state of a job (spec §3; A-REX's info-provider mapping, arex-behaviour §7.6),
 * except that a killed job is KILLED (A-REX's C++ mapper never says so).
 */
export function restState(s: MachineState): RestState {
  switch (s.state) {
    case 'ACCEPTED':
      return s.pending ? 'ACCEPTED' : 'ACCEPTING';
    case 'PREPARING':
      return s.pending ? 'PREPARED' : 'PREPARING';
    case 'SUBMIT':
      return 'SUBMITTING';
    case 'INLRMS':
      // A just-submitted job whose backend has not yet said more is queuing.
      return s.pending ? 'EXECUTED' : (s.lrmsState ?? 'QUEUING');
    case 'FINISHING':
      return 'FINISHING';
    case 'CANCELING':
      return 'KILLING';
    case 'FINISHED':
      return FINISHED_REST[s.outcome ?? 'success'];
    case 'DELETED':
      return 'WIPED';
  }
}

/** A-REX's one-letter batch state for the info document (src/info/job-states.ts `LrmsState`). */
export function lrmsLetter(sub: LrmsSubState): 'Q' | 'R' | 'S' | 'E' | 'O' {
  switch (sub) {
    case 'QUEUING':
      return 'Q';
    case 'RUNNING':
      return 'R';
    case 'HELD':
      return 'S';
    case 'EXITINGLRMS':
      return 'E';
    case 'OTHER':
      return 'O';
  }
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

/** The stored fields as read back (strings for the enumerations). */
export interface StoredMachineFields {
  readonly state: string;
  readonly pending: boolean;
  readonly lrmsState: string | null;
  readonly outcome: string | null;
  readonly failedState: string | null;
  readonly failedCause: string | null;
  readonly failureReason: string | null;
  readonly killRequested: boolean;
  readonly cleanRequested: boolean;
  readonly restartRequested: boolean;
  readonly rerunsLeft: number;
  readonly localId: string | null;
  readonly exitCode: number | null;
}

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
    failedCause: member<FailedCause>(['internal', 'client'], r.failedCause, 'failure cause', true),
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
  const decided = s.state === 'CANCELING' || s.state === 'FINISHING' || isFinal(s) || (s.state === 'INLRMS' && s.pending);
  if (decided !== (s.outcome !== null)) return 'outcome is set exactly once the job left the processing path';
  const failure = [s.failedState, s.failedCause, s.failureReason].filter((v) => v !== null).length;
  if (failure !== 0 && failure !== 3) return 'failure fields are set together';
  if (failure === 3 && s.outcome === 'success') return 'a successful job has no failure';
  if (failure === 0 && (s.outcome === 'failed' || s.outcome === 'killed')) return 'a failed or killed job records its failure';
  if (!Number.isInteger(s.rerunsLeft) || s.rerunsLeft < 0) return 'reruns left is a non-negative integer';
  return undefined;
}
