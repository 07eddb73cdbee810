/**
 * The job state machine: one pure function `next(job, event)` and one table of the
 * allowed moves. The scheduler feeds it events (a step finished, the backend reported,
 * a request flag was set, a limit freed a slot), persists the returned state with a
 * compare-and-set, and then carries out the returned effects, each of which ends in
 * another event:
 *
 *   effect             carried out by the scheduler          ends with event
 *   start-stage-in     download inputs / wait for uploads    staging-done | staging-failed | no-executable
 *   submit-batch-job   backend.submit(spec)                  submitted | submit-failed
 *   (backend updates)  onUpdate(localId, update)             lrms-state | lrms-done | lrms-failed
 *   start-stage-out    upload outputs, prune the session     upload-done | upload-failed
 *   abort-staging      stop the running stage-in/out         its staging-* / upload-* report
 *   cancel-batch-job   backend.cancel(localId)               lrms-done | lrms-failed, or cancel-done
 *                                                            when the backend no longer knows the job
 *   recover-batch-job  backend.recover([ref]) (at start-up)  lrms-state | lrms-done | lrms-failed
 *   confirm-cancel     nothing runs: send cancel-done now    cancel-done
 *   await-slot         queue for a slot of `step`            limit-release
 *   prepare-rerun      drop the previous attempt's files     -
 *   record-end         set end time and session lifetime     lifetime-expired (later)
 *   wipe-session       delete the session dir and most data  -
 *   remove-job         delete everything, record included    -
 *
 * Effects are listed in the order in which they are to be carried out.
 *
 * Failure paths (A-REX §7.3): the first failure records failedState (the state
 * it happened in), failedCause (`internal`, or `client` for a kill) and failureReason;
 * later failures keep them. A step that failed by itself (stage-in, submission, batch
 * job, stage-out) has nothing left to stop, so the job goes straight to FINISHING
 * (FINISHED for stage-out); a kill or an internal failure while something runs goes
 * through CANCELING to stop it first.
 *
 * Limits: an event that completes a step carries `hold: true` when the next step has
 * no free slot; the job then stays in its state as PENDING (REST ACCEPTED, PREPARED,
 * EXECUTED) until `limit-release`. Failure paths never wait for a slot.
 */
import type { MachineState } from './states.js';
import type { FailedCause, InternalState, LrmsSubState, Outcome, Position } from '../vocabulary/job-states.js';
import { isFinal } from './states.js';
import { positionOf, restState, splitPosition } from '../vocabulary/job-states.js';

export type EngineEvent =
  /** The scheduler takes up a new job (ACCEPTED); `hold` when no stage-in slot is free. */
  | { readonly type: 'picked-up'; readonly hold?: boolean }
  /** A slot freed up for a PENDING job. */
  | { readonly type: 'limit-release' }
  /** Stage-in finished; `hold` when no submission slot is free. */
  | { readonly type: 'staging-done'; readonly hold?: boolean }
  | { readonly type: 'staging-failed'; readonly reason: string }
  /** Stage-in finished and the description has no executable: straight to stage-out. */
  | { readonly type: 'no-executable' }
  /** `running`: the batch system runs the job already (BatchBackend.runsOnSubmit). */
  | { readonly type: 'submitted'; readonly localId: string; readonly running?: boolean }
  | { readonly type: 'submit-failed'; readonly reason: string }
  /**
   * The job was killed while its submission waited, and the backend withdrew it before
   * its submission command started (CE_ERR_LRMS_SUBMIT_WITHDRAWN): nothing is in the batch system.
   */
  | { readonly type: 'submit-withdrawn' }
  /** Backend update. `localId` is required while the job is still SUBMIT (the update implies the submission succeeded). */
  | { readonly type: 'lrms-state'; readonly lrmsState: LrmsSubState; readonly localId?: string }
  /** The batch job ended by itself; success iff `exitCode` equals `expectedExitCode` (default 0). */
  | {
      readonly type: 'lrms-done';
      readonly exitCode: number;
      readonly expectedExitCode?: number;
      readonly hold?: boolean;
      readonly localId?: string;
    }
  /** The batch job ended by the batch system's doing (limit, cancel, lost, could not start). */
  | {
      readonly type: 'lrms-failed';
      readonly reason: string;
      readonly exitCode?: number | null;
      readonly hold?: boolean;
      readonly localId?: string;
    }
  | { readonly type: 'upload-done' }
  | { readonly type: 'upload-failed'; readonly reason: string }
  /** Act on the kill flag. */
  | { readonly type: 'kill-requested' }
  /** Everything a CANCELING job ran has stopped (or nothing ran). */
  | { readonly type: 'cancel-done' }
  /** A processing error outside the steps' own reports (bad session dir, dry run, internal error). */
  | { readonly type: 'processing-failed'; readonly reason: string }
  /** Act on the restart flag. `inputsComplete`: every input is still in the session (re-entry skips stage-in). */
  | { readonly type: 'restart-requested'; readonly inputsComplete?: boolean }
  /** Act on the clean flag. */
  | { readonly type: 'clean-requested' }
  | { readonly type: 'lifetime-expired' };

export type EventType = EngineEvent['type'];

export const EVENT_TYPES: readonly EventType[] = [
  'picked-up',
  'limit-release',
  'staging-done',
  'staging-failed',
  'no-executable',
  'submitted',
  'submit-failed',
  'submit-withdrawn',
  'lrms-state',
  'lrms-done',
  'lrms-failed',
  'upload-done',
  'upload-failed',
  'kill-requested',
  'cancel-done',
  'processing-failed',
  'restart-requested',
  'clean-requested',
  'lifetime-expired',
];

/** Stage-out mode: which outputs are kept/uploaded (ADL UseIfSuccess/UseIfFailure/UseIfCancel). */
export type StageOutMode = 'success' | 'failure' | 'cancel';
/** The steps a PENDING job waits for a slot of. */
export type SlotStep = 'PREPARING' | 'SUBMIT' | 'FINISHING';

export type Effect =
  | { readonly type: 'start-stage-in' }
  | { readonly type: 'abort-staging' }
  | { readonly type: 'submit-batch-job' }
  | { readonly type: 'cancel-batch-job'; readonly localId: string }
  /** After a service restart: have the backend take the batch job over again (backend.recover). */
  | { readonly type: 'recover-batch-job'; readonly localId: string }
  | { readonly type: 'confirm-cancel' }
  | { readonly type: 'start-stage-out'; readonly mode: StageOutMode }
  | { readonly type: 'await-slot'; readonly step: SlotStep }
  | { readonly type: 'prepare-rerun' }
  | { readonly type: 'record-end' }
  | { readonly type: 'wipe-session' }
  | { readonly type: 'remove-job' };

export type Transition =
  | {
      readonly ok: true;
      readonly from: MachineState;
      readonly to: MachineState;
      readonly effects: readonly Effect[];
      /** Log line for the job's `errors` file, e.g. `Starting job processing`. */
      readonly reason: string;
    }
  | { readonly ok: false; readonly reason: string };

type Moves = Readonly<Partial<Record<EventType, readonly Position[]>>>;

const KILLABLE_TO_CANCELING: Moves = { 'kill-requested': ['CANCELING'] };
const BATCH_END: readonly Position[] = ['FINISHING', 'PENDING:INLRMS'];

/**
 * Every allowed move: position → event → the positions it may lead to (which one
 * depends on the event's data, e.g. `hold` or the exit code). Anything absent is
 * refused. `next` never returns a move outside this table (checked at run time).
 */
export const TRANSITIONS: Readonly<Record<Position, Moves>> = {
  ACCEPTED: {
    'picked-up': ['PREPARING', 'PENDING:ACCEPTED'],
    ...KILLABLE_TO_CANCELING,
    'processing-failed': ['FINISHING'],
  },
  'PENDING:ACCEPTED': { 'limit-release': ['PREPARING'], ...KILLABLE_TO_CANCELING, 'processing-failed': ['FINISHING'] },
  PREPARING: {
    'staging-done': ['SUBMIT', 'PENDING:PREPARING'],
    'staging-failed': ['FINISHING'],
    'no-executable': ['FINISHING'],
    ...KILLABLE_TO_CANCELING,
    'processing-failed': ['CANCELING'],
  },
  'PENDING:PREPARING': { 'limit-release': ['SUBMIT'], ...KILLABLE_TO_CANCELING, 'processing-failed': ['FINISHING'] },
  SUBMIT: {
    submitted: ['INLRMS'],
    'submit-failed': ['FINISHING'],
    'submit-withdrawn': ['CANCELING'],
    'lrms-state': ['INLRMS'],
    'lrms-done': BATCH_END,
    'lrms-failed': BATCH_END,
  },
  INLRMS: {
    'lrms-state': ['INLRMS'],
    'lrms-done': BATCH_END,
    'lrms-failed': BATCH_END,
    ...KILLABLE_TO_CANCELING,
    'processing-failed': ['CANCELING'],
  },
  'PENDING:INLRMS': { 'limit-release': ['FINISHING'], ...KILLABLE_TO_CANCELING, 'processing-failed': ['FINISHING'] },
  FINISHING: {
    'upload-done': ['FINISHED'],
    'upload-failed': ['FINISHED'],
    'kill-requested': ['FINISHING'],
    'processing-failed': ['FINISHING'],
  },
  CANCELING: {
    'cancel-done': ['FINISHING'],
    'staging-done': ['FINISHING'],
    'staging-failed': ['FINISHING'],
    'lrms-done': ['FINISHING'],
    'lrms-failed': ['FINISHING'],
    'kill-requested': ['CANCELING'],
  },
  FINISHED: {
    'restart-requested': ['PENDING:ACCEPTED', 'PENDING:PREPARING', 'PENDING:INLRMS'],
    'clean-requested': ['FINISHED'],
    'lifetime-expired': ['DELETED'],
  },
  DELETED: { 'clean-requested': ['DELETED'] },
};

/** A-REX's text for a kill (its info provider recognises KILLED by it). */
export const KILL_REASON = 'Job is canceled by external request';

/** Why `type` is refused in `position` when the table has no entry. */
function refusalText(s: MachineState, type: EventType): string {
  const final = isFinal(s);
  switch (type) {
    case 'kill-requested':
      if (final) return `Job has already ended (${restState(s)})`;
      if (s.state === 'SUBMIT') return 'Kill is deferred until the batch system has accepted the job';
      break;
    case 'clean-requested':
      return 'Cleaning is deferred until the job has ended';
    case 'restart-requested':
      return restartRefusal(s) ?? 'Job has not finished yet';
    case 'lifetime-expired':
      return s.state === 'DELETED' ? 'Job is already wiped' : 'The session lifetime starts when the job has ended';
    case 'processing-failed':
      if (s.state === 'SUBMIT') return 'A submission may be in flight: report submit-failed';
      if (s.state === 'CANCELING') return 'Job is already being stopped';
      if (final) return 'Job has already ended';
      break;
    case 'lrms-state':
    case 'lrms-done':
    case 'lrms-failed':
      return `Batch update ignored in ${positionOf(s)}`;
    default:
      break;
  }
  return `Event ${type} is not expected in ${positionOf(s)}`;
}

/** Where a restarted job re-enters, by the state it failed in (A-REX §7.5); undefined: not restartable. */
export function restartEntry(failedState: InternalState, inputsComplete: boolean): Position | undefined {
  switch (failedState) {
    case 'ACCEPTED':
    case 'PREPARING':
      return 'PENDING:ACCEPTED';
    case 'SUBMIT':
    case 'INLRMS':
      return inputsComplete ? 'PENDING:PREPARING' : 'PENDING:ACCEPTED';
    case 'FINISHING':
      return 'PENDING:INLRMS';
    default:
      return undefined;
  }
}

/** Why a restart of this job would be refused now, or undefined if it would be accepted. */
export function restartRefusal(s: MachineState): string | undefined {
  if (s.state !== 'FINISHED') return s.state === 'DELETED' ? 'Job is already wiped' : 'Job has not finished yet';
  if (s.outcome === 'success' || s.failedState === null) return 'Job has not failed';
  if (restartEntry(s.failedState, false) === undefined) return `Job cannot be restarted from ${s.failedState}`;
  if (s.rerunsLeft <= 0) return 'No more restarts allowed';
  if (s.cleanRequested) return 'Job is being cleaned';
  return undefined;
}

/** Why a kill of this job would be refused now (final job, or deferred in SUBMIT), or undefined. */
export function killRefusal(s: MachineState): string | undefined {
  return TRANSITIONS[positionOf(s)]['kill-requested'] === undefined ? refusalText(s, 'kill-requested') : undefined;
}

/**
 * Whether a kill would change anything now: the job is not final and kill moves it on
 * (to CANCELING), or it is in SUBMIT (the kill is deferred until the batch system answers).
 * A kill where it is a self-loop (CANCELING: already being killed; FINISHING: the run is
 * over) is accepted by REST but offered by no page.
 */
export function killMovesOn(s: MachineState): boolean {
  if (s.state === 'SUBMIT' && !s.pending) return true;
  const to = TRANSITIONS[positionOf(s)]['kill-requested'];
  return to !== undefined && to.some((p) => p !== positionOf(s));
}

/**
 * The request flag the scheduler should act on now, if any: a kill (not while SUBMIT:
 * deferred), a clean of an ended job, a restart that would be accepted. A flag that
 * cannot be acted on stays set and is harmless.
 */
export function requestedEvent(
  s: MachineState,
): 'kill-requested' | 'clean-requested' | 'restart-requested' | undefined {
  if (s.killRequested && killRefusal(s) === undefined) return 'kill-requested';
  if (s.cleanRequested && isFinal(s)) return 'clean-requested';
  if (s.restartRequested && restartRefusal(s) === undefined) return 'restart-requested';
  return undefined;
}

export function stageOutMode(outcome: Outcome | null): StageOutMode {
  return outcome === 'killed' ? 'cancel' : outcome === 'failed' ? 'failure' : 'success';
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Mutable<MachineState>;

function at(s: Draft, p: Position): Draft {
  const { state, pending } = splitPosition(p);
  s.state = state;
  s.pending = pending;
  if (!(state === 'INLRMS' && !pending)) s.lrmsState = null;
  return s;
}

/** Record a failure: the first one wins; the outcome becomes failed unless already killed. */
function fail(s: Draft, reason: string, cause: FailedCause, outcome: 'failed' | 'killed' = 'failed'): void {
  if (s.failedState === null) {
    s.failedState = s.state;
    s.failedCause = cause;
    s.failureReason = reason;
  }
  if (s.outcome !== 'killed') s.outcome = outcome;
}

function stageOut(s: Draft): Effect {
  return { type: 'start-stage-out', mode: stageOutMode(s.outcome) };
}

function lrmsFailureText(reason: string, exitCode: number | null | undefined): string {
  return exitCode === null || exitCode === undefined ? `LRMS error: ${reason}` : `LRMS error: (${exitCode}) ${reason}`;
}

type Step = { to: Draft; effects: Effect[]; reason: string } | { refuse: string };

/** Apply `event` to a draft copy of the job; the table has already allowed (position, type). */
function apply(d: Draft, e: EngineEvent): Step {
  const from = positionOf(d);
  switch (e.type) {
    case 'picked-up':
      if (e.hold === true)
        return {
          to: at(d, 'PENDING:ACCEPTED'),
          effects: [{ type: 'await-slot', step: 'PREPARING' }],
          reason: 'Limit of preparing jobs reached',
        };
      return { to: at(d, 'PREPARING'), effects: [{ type: 'start-stage-in' }], reason: 'Starting job processing' };

    case 'limit-release':
      if (from === 'PENDING:ACCEPTED')
        return { to: at(d, 'PREPARING'), effects: [{ type: 'start-stage-in' }], reason: 'Starting job processing' };
      if (from === 'PENDING:PREPARING')
        return {
          to: at(d, 'SUBMIT'),
          effects: [{ type: 'submit-batch-job' }],
          reason: 'Passing job to the batch system',
        };
      return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: 'Starting stage-out' };

    case 'staging-done':
      if (from === 'CANCELING') return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: 'Stage-in stopped' };
      if (e.hold === true)
        return {
          to: at(d, 'PENDING:PREPARING'),
          effects: [{ type: 'await-slot', step: 'SUBMIT' }],
          reason: 'Limit of running jobs reached',
        };
      return {
        to: at(d, 'SUBMIT'),
        effects: [{ type: 'submit-batch-job' }],
        reason: 'Pre-staging finished, passing job to the batch system',
      };

    case 'staging-failed':
      if (from === 'CANCELING') return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: 'Stage-in stopped' };
      fail(d, e.reason, 'internal');
      return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: e.reason };

    case 'no-executable':
      d.outcome = 'success';
      return {
        to: at(d, 'FINISHING'),
        effects: [stageOut(d)],
        reason: 'Job defines no executable; going directly to stage-out',
      };

    case 'submitted':
      d.localId = e.localId;
      at(d, 'INLRMS').lrmsState = e.running === true ? 'RUNNING' : 'QUEUING';
      return { to: d, effects: [], reason: `Job submitted to the batch system as ${e.localId}` };

    case 'submit-withdrawn':
      // As a kill of a job with nothing running: through CANCELING (nothing to stop) to a KILLED end.
      d.killRequested = false;
      fail(d, KILL_REASON, 'client', 'killed');
      return { to: at(d, 'CANCELING'), effects: [{ type: 'confirm-cancel' }], reason: KILL_REASON };

    case 'submit-failed':
      fail(d, e.reason, 'internal');
      return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: e.reason };

    case 'lrms-state':
    case 'lrms-done':
    case 'lrms-failed': {
      if (from === 'SUBMIT') {
        if (e.localId === undefined)
          return { refuse: 'A batch update for a job still being submitted must name its batch id' };
        d.localId = e.localId;
      } else if (e.localId !== undefined && e.localId !== d.localId) {
        return { refuse: 'Batch update for another batch job (an earlier attempt)' };
      }
      if (e.type === 'lrms-state') {
        at(d, 'INLRMS').lrmsState = e.lrmsState;
        return { to: d, effects: [], reason: `Batch state ${e.lrmsState}` };
      }
      if (e.exitCode !== undefined && e.exitCode !== null) d.exitCode = e.exitCode;
      if (from === 'CANCELING') return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: 'Batch job stopped' };
      let reason: string;
      if (e.type === 'lrms-failed') {
        reason = lrmsFailureText(e.reason, e.exitCode);
        d.state = 'INLRMS'; // the failure happened in the batch system, also when reported during SUBMIT
        fail(d, reason, 'internal');
      } else if (e.exitCode !== (e.expectedExitCode ?? 0)) {
        reason = lrmsFailureText(
          `Job finished with exit code ${e.exitCode}${e.expectedExitCode ? `, expected ${e.expectedExitCode}` : ''}`,
          e.exitCode,
        );
        d.state = 'INLRMS';
        fail(d, reason, 'internal');
      } else {
        reason = 'Batch job finished';
        d.outcome = 'success';
      }
      if (e.hold === true)
        return {
          to: at(d, 'PENDING:INLRMS'),
          effects: [{ type: 'await-slot', step: 'FINISHING' }],
          reason: `${reason}; limit of finishing jobs reached`,
        };
      return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason };
    }

    case 'upload-done':
      d.outcome ??= 'success';
      return { to: at(d, 'FINISHED'), effects: [{ type: 'record-end' }], reason: 'Stage-out finished' };

    case 'upload-failed':
      fail(d, e.reason, 'internal');
      return { to: at(d, 'FINISHED'), effects: [{ type: 'record-end' }], reason: e.reason };

    case 'kill-requested': {
      d.killRequested = false;
      if (from === 'CANCELING' || (from === 'FINISHING' && d.outcome === 'killed'))
        return { to: d, effects: [], reason: 'Kill already in progress' };
      fail(d, KILL_REASON, 'client', 'killed');
      if (from === 'FINISHING') return { to: d, effects: [{ type: 'abort-staging' }], reason: KILL_REASON };
      const stop: Effect =
        from === 'INLRMS' && d.localId !== null
          ? { type: 'cancel-batch-job', localId: d.localId }
          : from === 'PREPARING'
            ? { type: 'abort-staging' }
            : { type: 'confirm-cancel' };
      return { to: at(d, 'CANCELING'), effects: [stop], reason: KILL_REASON };
    }

    case 'cancel-done':
      return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: 'Job stopped' };

    case 'processing-failed':
      fail(d, e.reason, 'internal');
      if (from === 'PREPARING')
        return { to: at(d, 'CANCELING'), effects: [{ type: 'abort-staging' }], reason: e.reason };
      if (from === 'INLRMS') {
        const stop: Effect =
          d.localId !== null ? { type: 'cancel-batch-job', localId: d.localId } : { type: 'confirm-cancel' };
        return { to: at(d, 'CANCELING'), effects: [stop], reason: e.reason };
      }
      if (from === 'FINISHING') return { to: d, effects: [{ type: 'abort-staging' }], reason: e.reason };
      return { to: at(d, 'FINISHING'), effects: [stageOut(d)], reason: e.reason };

    case 'restart-requested': {
      const refusal = restartRefusal(d);
      if (refusal !== undefined) return { refuse: refusal };
      const entry = restartEntry(d.failedState as InternalState, e.inputsComplete === true) as Position;
      const keepsBatchResult = entry === 'PENDING:INLRMS';
      d.rerunsLeft -= 1;
      d.failedState = null;
      d.failedCause = null;
      d.failureReason = null;
      d.killRequested = false;
      d.restartRequested = false;
      // Re-entering before stage-out: the batch job's result stands and was a success
      // (a failure there would be the recorded failed state).
      d.outcome = keepsBatchResult ? 'success' : null;
      if (!keepsBatchResult) {
        d.localId = null;
        d.exitCode = null;
      }
      const step: SlotStep =
        entry === 'PENDING:ACCEPTED' ? 'PREPARING' : entry === 'PENDING:PREPARING' ? 'SUBMIT' : 'FINISHING';
      return {
        to: at(d, entry),
        effects: [{ type: 'prepare-rerun' }, { type: 'await-slot', step }],
        reason: `Restarting job (${d.rerunsLeft} restarts left)`,
      };
    }

    case 'clean-requested':
      d.cleanRequested = false;
      return { to: d, effects: [{ type: 'remove-job' }], reason: 'Cleaning job' };

    case 'lifetime-expired':
      return { to: at(d, 'DELETED'), effects: [{ type: 'wipe-session' }], reason: 'Session lifetime expired' };
  }
}

/**
 * The move `event` causes for `job`: the new job fields and the effects to carry out
 * once they are persisted, or a refusal with a readable reason (the job is unchanged).
 */
export function next(job: MachineState, event: EngineEvent): Transition {
  const from = positionOf(job);
  const allowed = TRANSITIONS[from][event.type];
  if (allowed === undefined) return { ok: false, reason: refusalText(job, event.type) };
  const step = apply({ ...job }, event);
  if ('refuse' in step) return { ok: false, reason: step.refuse };
  const to: MachineState = { ...step.to };
  const reached = positionOf(to);
  if (!allowed.includes(reached))
    throw new Error(`state machine bug: ${from} --${event.type}--> ${reached} is not in the table`);
  return { ok: true, from: job, to, effects: step.effects, reason: step.reason };
}

/**
 * What to (re)start for a job found in `s` when the service starts: the activities of
 * its state died with the previous process, except batch jobs, which are taken over.
 * ACCEPTED jobs are simply picked up again; FINISHED and DELETED need nothing.
 */
export function resumeEffects(s: MachineState): readonly Effect[] {
  switch (positionOf(s)) {
    case 'PENDING:ACCEPTED':
      return [{ type: 'await-slot', step: 'PREPARING' }];
    case 'PENDING:PREPARING':
      return [{ type: 'await-slot', step: 'SUBMIT' }];
    case 'PENDING:INLRMS':
      return [{ type: 'await-slot', step: 'FINISHING' }];
    case 'PREPARING':
      return [{ type: 'start-stage-in' }];
    case 'SUBMIT':
      // Submitting again is safe: the backend returns the job it may already have started.
      return [{ type: 'submit-batch-job' }];
    case 'INLRMS':
      return s.localId !== null ? [{ type: 'recover-batch-job', localId: s.localId }] : [{ type: 'submit-batch-job' }];
    case 'FINISHING':
      return [stageOut({ ...s })];
    case 'CANCELING':
      // A stage-in being aborted died with the service; a batch job may still run.
      return s.localId !== null
        ? [
            { type: 'recover-batch-job', localId: s.localId },
            { type: 'cancel-batch-job', localId: s.localId },
          ]
        : [{ type: 'confirm-cancel' }];
    default:
      return [];
  }
}
