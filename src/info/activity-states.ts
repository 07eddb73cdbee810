/**
 * The three `State` values of a ComputingActivity, in A-REX's order, and the
 * RestartState of a failed job. A-REX 7 publishes:
 *
 *   nordugrid:<STATE>[:<lrms>][:<failedstate>]   e.g. `nordugrid:INLRMS:R`, `nordugrid:FAILED::INLRMS`
 *   file:<local state>                           e.g. `file:inlrms`, `file:killed`, `file:hold`
 *   arcrest:<REST state>                         e.g. `arcrest:RUNNING`, `arcrest:FAILED`
 *
 * The clients (ARC client arcstat, pyarcrest, aCT) take the first value starting
 * with `arcrest:`; the other two are for people and for tools written against
 * A-REX's job xml files. The nordugrid and file forms follow A-REX's info provider:
 * a finished job is named FAILED or KILLED there after its REST state, a held-back
 * job is `PENDING:<STATE>` / `hold`, and a failed job's `file:` form names the
 * state it failed in.
 *
 * RestartState (present while a failure stands) gives the failed state in the same
 * three forms; its REST form has no batch-system state to go on, so INLRMS is
 * `arcrest:OTHER` (A-REX does the same; aCT retries only PREPARING/FINISHING ones).
 */
import { RESTART_REST_STATE, type InternalState, type LrmsState, type RestState } from '../vocabulary/job-states.js';

export interface StateInput {
  readonly restState: RestState;
  readonly gmState: InternalState;
  readonly pending?: boolean;
  readonly lrmsState?: LrmsState;
  readonly failedState?: InternalState;
}

/** A-REX's "nordugrid" state name: the GM state, with finished jobs split by outcome. */
function nordugridName(v: StateInput): string {
  if (v.gmState === 'FINISHED' && (v.restState === 'FAILED' || v.restState === 'KILLED')) return v.restState;
  return v.pending ? `PENDING:${v.gmState}` : v.gmState;
}

function nordugridForm(v: StateInput): string {
  const name = nordugridName(v);
  const lrms = v.gmState === 'INLRMS' && !v.pending ? v.lrmsState : undefined;
  const failed = (name === 'FAILED' || name === 'KILLED') && v.failedState !== undefined ? v.failedState : undefined;
  if (failed !== undefined) return `nordugrid:${name}:${lrms ?? ''}:${failed}`;
  if (lrms !== undefined) return `nordugrid:${name}:${lrms}`;
  return `nordugrid:${name}`;
}

/** Lower-case local state of a plain GM state (no outcome, not pending). */
function localOf(state: InternalState, lrms: LrmsState | undefined): string {
  if (state === 'INLRMS') {
    // A-REX names INLRMS jobs `inlrms` unless the batch system reports an unusual state.
    return lrms === undefined || lrms === 'Q' || lrms === 'R' || lrms === 'S' || lrms === 'EXECUTED'
      ? 'inlrms'
      : 'running';
  }
  return state.toLowerCase();
}

function fileForm(v: StateInput): string {
  const name = nordugridName(v);
  if (name === 'KILLED') return 'file:killed';
  if (name === 'FAILED')
    return v.failedState === undefined ? 'file:failed' : `file:${localOf(v.failedState, undefined)}`;
  if (v.pending) return 'file:hold';
  return `file:${localOf(v.gmState, v.lrmsState)}`;
}

/** The three State values, in order: nordugrid, file, arcrest. */
export function stateValues(v: StateInput): [string, string, string] {
  return [nordugridForm(v), fileForm(v), `arcrest:${v.restState}`];
}

/** The three RestartState values for the state a job failed in. */
export function restartStateValues(failedState: InternalState): [string, string, string] {
  return [
    `nordugrid:${failedState}`,
    `file:${localOf(failedState, undefined)}`,
    `arcrest:${RESTART_REST_STATE[failedState]}`,
  ];
}
