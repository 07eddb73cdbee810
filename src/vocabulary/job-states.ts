/**
 * The job-state vocabulary: every state name Ceres speaks, written out once, and the
 * mappings between them. The engine (transitions), the store, the info documents, the
 * lifecycle diagram and the REST filters all take their names from here. A leaf:
 * imports nothing, so every layer may use it.
 *
 * Three vocabularies, as in A-REX (docs/references.md):
 *  - internal states: A-REX's grid-manager names, written to `status` control files and
 *    the `state` column; a held-back job is `PENDING:<STATE>` (a Position);
 *  - REST states of the interface (spec §3), derived from the internal state;
 *  - the batch system's view of a running job: a REST sub-state (QUEUING, RUNNING, ...)
 *    and A-REX's one-letter form of it for the GLUE2 documents.
 */

/** Internal job states; `SUBMIT` is the "submitting" state. */
export const INTERNAL_STATES = [
  'ACCEPTED',
  'PREPARING',
  'SUBMIT',
  'INLRMS',
  'FINISHING',
  'FINISHED',
  'CANCELING',
  'DELETED',
] as const;
export type InternalState = (typeof INTERNAL_STATES)[number];

/** REST job states (spec §3). */
export const REST_STATES = [
  'ACCEPTING',
  'ACCEPTED',
  'PREPARING',
  'PREPARED',
  'SUBMITTING',
  'QUEUING',
  'RUNNING',
  'HELD',
  'EXITINGLRMS',
  'OTHER',
  'EXECUTED',
  'FINISHING',
  'FINISHED',
  'FAILED',
  'KILLING',
  'KILLED',
  'WIPED',
] as const;
export type RestState = (typeof REST_STATES)[number];

/** Batch-system sub-state of an INLRMS job, as the backend reports it; also its REST state. */
export const LRMS_SUB_STATES = ['QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER'] as const;
export type LrmsSubState = (typeof LRMS_SUB_STATES)[number];

/** How a job ends: FINISHED, FAILED or KILLED in REST; also the stage-out mode. */
export const OUTCOMES = ['success', 'failed', 'killed'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Who caused a failure (A-REX `failedcause`): `client` for a kill, else `internal`. */
export const FAILED_CAUSES = ['internal', 'client'] as const;
export type FailedCause = (typeof FAILED_CAUSES)[number];

/** A state with its pending flag, as written in status files: `INLRMS`, `PENDING:INLRMS`. */
export const POSITIONS = [
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
] as const;
export type Position = (typeof POSITIONS)[number];

/** States that may carry the pending flag. */
export const PENDABLE_STATES: readonly InternalState[] = ['ACCEPTED', 'PREPARING', 'INLRMS'];
/** States in which all activity of the job has ended. */
export const FINAL_STATES: readonly InternalState[] = ['FINISHED', 'DELETED'];
/** States in which the engine still has something to do (all but the final ones). */
export const ACTIVE_STATES: readonly InternalState[] = INTERNAL_STATES.filter((s) => !FINAL_STATES.includes(s));
/** States of a job not yet handed to the batch system (a queue's waiting jobs). */
export const WAITING_STATES: readonly InternalState[] = ['ACCEPTED', 'PREPARING', 'SUBMIT'];
/**
 * States of a job accepted but not yet handed to the batch system, pending or not: what a
 * route's `maxWaiting` counts (docs/routes.md). SUBMIT is not among them: a job being
 * submitted counts toward `maxRunning`, so each job counts against one of the two.
 */
export const BEFORE_BATCH_STATES: readonly InternalState[] = ['ACCEPTED', 'PREPARING'];
/** REST states of a job that has ended (the per-user limit of active jobs counts the others). */
export const ENDED_REST_STATES: readonly RestState[] = ['FINISHED', 'FAILED', 'KILLED', 'WIPED'];

export function positionOf(s: { readonly state: InternalState; readonly pending: boolean }): Position {
  return (s.pending ? `PENDING:${s.state}` : s.state) as Position;
}

/** The (state, pending) pair of a position. */
export function splitPosition(p: Position): { state: InternalState; pending: boolean } {
  return p.startsWith('PENDING:')
    ? { state: p.slice(8) as InternalState, pending: true }
    : { state: p as InternalState, pending: false };
}

/** What the REST state of a job depends on. */
export interface RestStateInput {
  readonly state: InternalState;
  readonly pending: boolean;
  readonly lrmsState: LrmsSubState | null;
  readonly outcome: Outcome | null;
}

const FINISHED_REST: Readonly<Record<Outcome, RestState>> = { success: 'FINISHED', failed: 'FAILED', killed: 'KILLED' };
/** REST states of a run that ended, one per outcome (an accounting record is written for each). */
export const OUTCOME_REST_STATES: readonly RestState[] = OUTCOMES.map((o) => FINISHED_REST[o]);

/**
 * The REST state of a job (spec §3; A-REX §7.6: its info provider's mapping),
 * except that a killed job is KILLED (A-REX's own mapping never says so).
 */
export function restState(s: RestStateInput): RestState {
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

/** Every REST state a job at position `p` can show, in vocabulary order (the lifecycle diagram). */
export function restStatesAt(p: Position): RestState[] {
  const at = splitPosition(p);
  const subs = at.state === 'INLRMS' && !at.pending ? LRMS_SUB_STATES : [null];
  const seen = new Set<RestState>();
  for (const lrmsState of subs) for (const outcome of OUTCOMES) seen.add(restState({ ...at, lrmsState, outcome }));
  return [...seen];
}

/** A-REX's one-letter batch state (`Q` queued, `R` running, `S` suspended/held, `E` exiting, `O` other). */
export type LrmsLetter = 'Q' | 'R' | 'S' | 'E' | 'O';
/** The batch state the GLUE2 documents know: a letter, or `EXECUTED` (gone from the batch system). */
export type LrmsState = LrmsLetter | 'EXECUTED';

const LETTER: Readonly<Record<LrmsSubState, LrmsLetter>> = {
  QUEUING: 'Q',
  RUNNING: 'R',
  HELD: 'S',
  EXITINGLRMS: 'E',
  OTHER: 'O',
};

export function lrmsLetter(sub: LrmsSubState): LrmsLetter {
  return LETTER[sub];
}

/**
 * REST name of a state a job failed in (its RestartState): no pending flag and no batch
 * state to go on, so INLRMS is OTHER (as A-REX publishes it).
 */
export const RESTART_REST_STATE: Readonly<Record<InternalState, RestState>> = {
  ACCEPTED: 'ACCEPTING',
  PREPARING: 'PREPARING',
  SUBMIT: 'SUBMITTING',
  INLRMS: 'OTHER',
  FINISHING: 'FINISHING',
  FINISHED: 'FINISHED',
  CANCELING: 'KILLING',
  DELETED: 'WIPED',
};
