// The state machine: every (position, event) pair against an expected table written
// here by hand (not derived from the implementation's table), then the details of
// each path: effects, failure records, restart re-entry, kill, REST mapping.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkInvariants,
  initialState,
  machineStateOf,
  persistedFields,
  type MachineState,
} from '../../src/engine/states.js';
import {
  INTERNAL_STATES,
  POSITIONS,
  REST_STATES,
  positionOf,
  restState,
  lrmsLetter,
  type InternalState,
  type Position,
  type RestState,
} from '../../src/vocabulary/job-states.js';
import {
  EVENT_TYPES,
  KILL_REASON,
  TRANSITIONS,
  killRefusal,
  next,
  requestedEvent,
  restartRefusal,
  resumeEffects,
  type EngineEvent,
  type Effect,
} from '../../src/engine/state-machine.js';
import { isCeError } from '../../src/errors/ce-error.js';

const base = initialState(2);
const failedInLrms = { failedState: 'INLRMS', failedCause: 'internal', failureReason: 'LRMS error: (1) boom' } as const;

/** One valid job per position. */
const AT: Record<Position, MachineState> = {
  ACCEPTED: base,
  'PENDING:ACCEPTED': { ...base, pending: true },
  PREPARING: { ...base, state: 'PREPARING' },
  'PENDING:PREPARING': { ...base, state: 'PREPARING', pending: true },
  SUBMIT: { ...base, state: 'SUBMIT' },
  INLRMS: { ...base, state: 'INLRMS', lrmsState: 'RUNNING', localId: 'L1' },
  'PENDING:INLRMS': { ...base, state: 'INLRMS', pending: true, localId: 'L1', exitCode: 0, outcome: 'success' },
  FINISHING: { ...base, state: 'FINISHING', localId: 'L1', exitCode: 0, outcome: 'success' },
  CANCELING: {
    ...base,
    state: 'CANCELING',
    localId: 'L1',
    outcome: 'killed',
    failedState: 'INLRMS',
    failedCause: 'client',
    failureReason: KILL_REASON,
  },
  FINISHED: { ...base, state: 'FINISHED', localId: 'L1', exitCode: 1, outcome: 'failed', ...failedInLrms },
  DELETED: { ...base, state: 'DELETED', localId: 'L1', exitCode: 0, outcome: 'success' },
};

/** Event samples: every event type at least once, data variants that change the destination. */
const SAMPLES: Record<string, EngineEvent> = {
  'picked-up': { type: 'picked-up' },
  'picked-up/hold': { type: 'picked-up', hold: true },
  'limit-release': { type: 'limit-release' },
  'staging-done': { type: 'staging-done' },
  'staging-done/hold': { type: 'staging-done', hold: true },
  'staging-failed': { type: 'staging-failed', reason: 'Data download failed' },
  'no-executable': { type: 'no-executable' },
  submitted: { type: 'submitted', localId: 'L1' },
  'submit-failed': { type: 'submit-failed', reason: 'Job submission to LRMS failed' },
  'submit-withdrawn': { type: 'submit-withdrawn' },
  'lrms-state': { type: 'lrms-state', lrmsState: 'HELD', localId: 'L1' },
  'lrms-done/0': { type: 'lrms-done', exitCode: 0, localId: 'L1' },
  'lrms-done/1': { type: 'lrms-done', exitCode: 1, localId: 'L1' },
  'lrms-done/hold': { type: 'lrms-done', exitCode: 0, hold: true, localId: 'L1' },
  'lrms-failed': { type: 'lrms-failed', reason: 'wall time limit exceeded', exitCode: 143, localId: 'L1' },
  'lrms-failed/hold': { type: 'lrms-failed', reason: 'memory limit exceeded', hold: true, localId: 'L1' },
  'upload-done': { type: 'upload-done' },
  'upload-failed': { type: 'upload-failed', reason: 'Data upload failed' },
  'kill-requested': { type: 'kill-requested' },
  'cancel-done': { type: 'cancel-done' },
  'processing-failed': { type: 'processing-failed', reason: 'Internal error' },
  'restart-requested': { type: 'restart-requested' },
  'restart-requested/inputs': { type: 'restart-requested', inputsComplete: true },
  'clean-requested': { type: 'clean-requested' },
  'lifetime-expired': { type: 'lifetime-expired' },
};

const LRMS_END: Record<string, Position> = {
  'lrms-done/0': 'FINISHING',
  'lrms-done/1': 'FINISHING',
  'lrms-done/hold': 'PENDING:INLRMS',
  'lrms-failed': 'FINISHING',
  'lrms-failed/hold': 'PENDING:INLRMS',
};

/** The allowed moves, by hand from the design (docs/lifecycle.md). Everything else is refused. */
const EXPECTED: Record<Position, Record<string, Position>> = {
  ACCEPTED: {
    'picked-up': 'PREPARING',
    'picked-up/hold': 'PENDING:ACCEPTED',
    'kill-requested': 'CANCELING',
    'processing-failed': 'FINISHING',
  },
  'PENDING:ACCEPTED': { 'limit-release': 'PREPARING', 'kill-requested': 'CANCELING', 'processing-failed': 'FINISHING' },
  PREPARING: {
    'staging-done': 'SUBMIT',
    'staging-done/hold': 'PENDING:PREPARING',
    'staging-failed': 'FINISHING',
    'no-executable': 'FINISHING',
    'kill-requested': 'CANCELING',
    'processing-failed': 'CANCELING',
  },
  'PENDING:PREPARING': { 'limit-release': 'SUBMIT', 'kill-requested': 'CANCELING', 'processing-failed': 'FINISHING' },
  SUBMIT: {
    submitted: 'INLRMS',
    'submit-failed': 'FINISHING',
    'submit-withdrawn': 'CANCELING',
    'lrms-state': 'INLRMS',
    ...LRMS_END,
  },
  INLRMS: { 'lrms-state': 'INLRMS', ...LRMS_END, 'kill-requested': 'CANCELING', 'processing-failed': 'CANCELING' },
  'PENDING:INLRMS': { 'limit-release': 'FINISHING', 'kill-requested': 'CANCELING', 'processing-failed': 'FINISHING' },
  FINISHING: {
    'upload-done': 'FINISHED',
    'upload-failed': 'FINISHED',
    'kill-requested': 'FINISHING',
    'processing-failed': 'FINISHING',
  },
  CANCELING: {
    'cancel-done': 'FINISHING',
    'staging-done': 'FINISHING',
    'staging-done/hold': 'FINISHING',
    'staging-failed': 'FINISHING',
    'lrms-done/0': 'FINISHING',
    'lrms-done/1': 'FINISHING',
    'lrms-done/hold': 'FINISHING',
    'lrms-failed': 'FINISHING',
    'lrms-failed/hold': 'FINISHING',
    'kill-requested': 'CANCELING',
  },
  FINISHED: {
    'restart-requested': 'PENDING:ACCEPTED',
    'restart-requested/inputs': 'PENDING:PREPARING',
    'clean-requested': 'FINISHED',
    'lifetime-expired': 'DELETED',
  },
  DELETED: { 'clean-requested': 'DELETED' },
};

function must(s: MachineState, e: EngineEvent): { to: MachineState; effects: readonly Effect[]; reason: string } {
  const r = next(s, e);
  if (!r.ok) assert.fail(`${positionOf(s)} --${e.type}--> refused: ${r.reason}`);
  return r;
}

function refused(s: MachineState, e: EngineEvent): string {
  const r = next(s, e);
  if (r.ok) assert.fail(`${positionOf(s)} --${e.type}--> ${positionOf(r.to)} was allowed`);
  return r.reason;
}

describe('transition matrix: every (position, event) pair', () => {
  it('the samples cover every event type and the fixtures every position, all valid', () => {
    assert.deepEqual(new Set(Object.values(SAMPLES).map((e) => e.type)), new Set(EVENT_TYPES));
    assert.deepEqual(Object.keys(AT).sort(), [...POSITIONS].sort());
    for (const p of POSITIONS) {
      assert.equal(positionOf(AT[p]), p);
      assert.equal(checkInvariants(AT[p]), undefined, p);
    }
  });

  for (const p of POSITIONS) {
    for (const [name, event] of Object.entries(SAMPLES)) {
      const want = EXPECTED[p][name];
      it(`${p} + ${name} → ${want ?? 'refused'}`, () => {
        const r = next(AT[p], event);
        if (want === undefined) {
          assert.equal(r.ok, false);
          if (!r.ok) assert.ok(r.reason.length > 0);
          return;
        }
        assert.ok(r.ok, r.ok ? '' : r.reason);
        if (!r.ok) return;
        assert.equal(positionOf(r.to), want);
        assert.equal(checkInvariants(r.to), undefined);
        assert.ok(r.reason.length > 0);
        assert.equal(r.from, AT[p], 'the input is returned as `from`, untouched');
      });
    }
  }

  it("the implementation's table allows exactly the expected event types per position", () => {
    for (const p of POSITIONS) {
      const wantTypes = new Set(Object.keys(EXPECTED[p]).map((n) => SAMPLES[n]?.type));
      assert.deepEqual(new Set(Object.keys(TRANSITIONS[p])), wantTypes, p);
    }
  });
});

describe('normal flow', () => {
  it('a trivial job walks ACCEPTED → PREPARING → SUBMIT → INLRMS → FINISHING → FINISHED with one effect per step', () => {
    let s = base;
    const trail: string[] = [];
    const step = (e: EngineEvent): void => {
      const r = must(s, e);
      s = r.to;
      trail.push(`${positionOf(s)}/${restState(s)}:${r.effects.map((x) => x.type).join('+')}`);
    };
    assert.equal(restState(s), 'ACCEPTING');
    step({ type: 'picked-up' });
    step({ type: 'staging-done' });
    step({ type: 'submitted', localId: '4242' });
    step({ type: 'lrms-state', lrmsState: 'RUNNING' });
    step({ type: 'lrms-done', exitCode: 0 });
    step({ type: 'upload-done' });
    assert.deepEqual(trail, [
      'PREPARING/PREPARING:start-stage-in',
      'SUBMIT/SUBMITTING:submit-batch-job',
      'INLRMS/QUEUING:',
      'INLRMS/RUNNING:',
      'FINISHING/FINISHING:start-stage-out',
      'FINISHED/FINISHED:record-end',
    ]);
    assert.equal(s.localId, '4242');
    assert.equal(s.exitCode, 0);
    assert.equal(s.outcome, 'success');
    assert.equal(s.failedState, null);
  });

  it('stage-out after a successful batch job runs in success mode', () => {
    const r = must(AT.INLRMS, { type: 'lrms-done', exitCode: 0 });
    assert.deepEqual(r.effects, [{ type: 'start-stage-out', mode: 'success' }]);
  });

  it('a job without executable goes from stage-in straight to stage-out and ends FINISHED', () => {
    const r = must(AT.PREPARING, { type: 'no-executable' });
    assert.equal(r.to.outcome, 'success');
    assert.deepEqual(r.effects, [{ type: 'start-stage-out', mode: 'success' }]);
    assert.equal(restState(must(r.to, { type: 'upload-done' }).to), 'FINISHED');
  });

  it('a backend update that arrives before `submitted` implies the submission and records the batch id', () => {
    const r = must(AT.SUBMIT, { type: 'lrms-state', lrmsState: 'RUNNING', localId: 'L7' });
    assert.equal(positionOf(r.to), 'INLRMS');
    assert.equal(r.to.localId, 'L7');
    const late = next(r.to, { type: 'submitted', localId: 'L7' });
    assert.equal(late.ok, false, 'the late `submitted` is refused, the job stays as it is');
  });

  it('a submission the batch system runs at once (runsOnSubmit) is recorded as RUNNING in one step', () => {
    const r = must(AT.SUBMIT, { type: 'submitted', localId: 'L8', running: true });
    assert.equal(positionOf(r.to), 'INLRMS');
    assert.equal(restState(r.to), 'RUNNING');
    assert.equal(r.to.localId, 'L8');
    assert.deepEqual(r.effects, []);
  });

  it('a final update that arrives before `submitted` ends the batch step', () => {
    const r = must(AT.SUBMIT, { type: 'lrms-done', exitCode: 0, localId: 'L7' });
    assert.equal(positionOf(r.to), 'FINISHING');
    assert.equal(r.to.localId, 'L7');
  });
});

describe('limits: PENDING states', () => {
  it('hold at pick-up → PENDING:ACCEPTED (REST ACCEPTED), released into PREPARING', () => {
    const held = must(base, { type: 'picked-up', hold: true });
    assert.equal(restState(held.to), 'ACCEPTED');
    assert.deepEqual(held.effects, [{ type: 'await-slot', step: 'PREPARING' }]);
    const rel = must(held.to, { type: 'limit-release' });
    assert.equal(positionOf(rel.to), 'PREPARING');
    assert.deepEqual(rel.effects, [{ type: 'start-stage-in' }]);
  });

  it('hold after stage-in → PENDING:PREPARING (REST PREPARED), released into SUBMIT', () => {
    const held = must(AT.PREPARING, { type: 'staging-done', hold: true });
    assert.equal(restState(held.to), 'PREPARED');
    assert.deepEqual(held.effects, [{ type: 'await-slot', step: 'SUBMIT' }]);
    const rel = must(held.to, { type: 'limit-release' });
    assert.deepEqual(rel.effects, [{ type: 'submit-batch-job' }]);
  });

  it('hold after the batch job → PENDING:INLRMS (REST EXECUTED) keeps the exit code; release starts stage-out in the recorded mode', () => {
    const held = must(AT.INLRMS, { type: 'lrms-done', exitCode: 3, hold: true });
    assert.equal(restState(held.to), 'EXECUTED');
    assert.equal(held.to.exitCode, 3);
    assert.equal(held.to.outcome, 'failed');
    assert.equal(held.to.lrmsState, null);
    const rel = must(held.to, { type: 'limit-release' });
    assert.deepEqual(rel.effects, [{ type: 'start-stage-out', mode: 'failure' }]);
  });

  it('limit-release of a job that is not pending is refused', () => {
    for (const p of [
      'ACCEPTED',
      'PREPARING',
      'SUBMIT',
      'INLRMS',
      'FINISHING',
      'CANCELING',
      'FINISHED',
      'DELETED',
    ] as const) {
      refused(AT[p], { type: 'limit-release' });
    }
  });
});

describe('failure paths record the failed step', () => {
  const cases: Array<[string, Position, EngineEvent, Position, string, string]> = [
    [
      'stage-in',
      'PREPARING',
      { type: 'staging-failed', reason: 'Data download failed' },
      'FINISHING',
      'PREPARING',
      'Data download failed',
    ],
    [
      'submission',
      'SUBMIT',
      { type: 'submit-failed', reason: 'sbatch: error' },
      'FINISHING',
      'SUBMIT',
      'sbatch: error',
    ],
    [
      'non-zero exit',
      'INLRMS',
      { type: 'lrms-done', exitCode: 2 },
      'FINISHING',
      'INLRMS',
      'LRMS error: (2) Job finished with exit code 2',
    ],
    [
      'batch failure',
      'INLRMS',
      { type: 'lrms-failed', reason: 'wall time limit exceeded', exitCode: 143 },
      'FINISHING',
      'INLRMS',
      'LRMS error: (143) wall time limit exceeded',
    ],
    [
      'batch failure without exit code',
      'INLRMS',
      { type: 'lrms-failed', reason: 'job lost' },
      'FINISHING',
      'INLRMS',
      'LRMS error: job lost',
    ],
    [
      'batch failure reported during SUBMIT',
      'SUBMIT',
      { type: 'lrms-failed', reason: 'could not start', localId: 'L2' },
      'FINISHING',
      'INLRMS',
      'LRMS error: could not start',
    ],
    [
      'stage-out',
      'FINISHING',
      { type: 'upload-failed', reason: 'Data upload failed' },
      'FINISHED',
      'FINISHING',
      'Data upload failed',
    ],
    [
      'processing in ACCEPTED',
      'ACCEPTED',
      { type: 'processing-failed', reason: 'Dry run' },
      'FINISHING',
      'ACCEPTED',
      'Dry run',
    ],
    [
      'processing while pending',
      'PENDING:PREPARING',
      { type: 'processing-failed', reason: 'x' },
      'FINISHING',
      'PREPARING',
      'x',
    ],
    [
      'processing during stage-in',
      'PREPARING',
      { type: 'processing-failed', reason: 'x' },
      'CANCELING',
      'PREPARING',
      'x',
    ],
    [
      'processing in the batch system',
      'INLRMS',
      { type: 'processing-failed', reason: 'x' },
      'CANCELING',
      'INLRMS',
      'x',
    ],
  ];
  for (const [name, from, event, to, failedState, reason] of cases) {
    it(`${name}: ${from} → ${to}, failedState ${failedState}, cause internal`, () => {
      const r = must(AT[from], event);
      assert.equal(positionOf(r.to), to);
      assert.equal(r.to.failedState, failedState);
      assert.equal(r.to.failedCause, 'internal');
      assert.equal(r.to.failureReason, reason);
      assert.equal(r.to.outcome, 'failed');
    });
  }

  it('an exit code other than the expected one fails, the expected one succeeds', () => {
    const bad = must(AT.INLRMS, { type: 'lrms-done', exitCode: 0, expectedExitCode: 3 });
    assert.equal(bad.to.outcome, 'failed');
    assert.equal(bad.to.failureReason, 'LRMS error: (0) Job finished with exit code 0, expected 3');
    const good = must(AT.INLRMS, { type: 'lrms-done', exitCode: 3, expectedExitCode: 3 });
    assert.equal(good.to.outcome, 'success');
    assert.equal(good.to.exitCode, 3);
  });

  it('a failed job ends FAILED with stage-out in failure mode', () => {
    const r = must(AT.INLRMS, { type: 'lrms-done', exitCode: 1 });
    assert.deepEqual(r.effects, [{ type: 'start-stage-out', mode: 'failure' }]);
    assert.equal(restState(must(r.to, { type: 'upload-done' }).to), 'FAILED');
  });

  it('the first failure is kept: a later stage-out failure does not overwrite it', () => {
    const inFinishing = must(AT.INLRMS, { type: 'lrms-done', exitCode: 1 }).to;
    const end = must(inFinishing, { type: 'upload-failed', reason: 'Data upload failed' }).to;
    assert.equal(end.failedState, 'INLRMS');
    assert.equal(end.failureReason, 'LRMS error: (1) Job finished with exit code 1');
  });

  it('a stage-out failure after success makes the job FAILED with failedState FINISHING', () => {
    const end = must(AT.FINISHING, { type: 'upload-failed', reason: 'Data upload failed' }).to;
    assert.equal(restState(end), 'FAILED');
    assert.equal(end.failedState, 'FINISHING');
  });

  it('an internal failure during stage-in stops it, then stage-out runs in failure mode', () => {
    const c = must(AT.PREPARING, { type: 'processing-failed', reason: 'Internal error' });
    assert.deepEqual(c.effects, [{ type: 'abort-staging' }]);
    assert.equal(restState(c.to), 'KILLING');
    const f = must(c.to, { type: 'staging-failed', reason: 'aborted' });
    assert.deepEqual(f.effects, [{ type: 'start-stage-out', mode: 'failure' }]);
    assert.equal(f.to.failureReason, 'Internal error', 'the abort report does not replace the cause');
  });

  it('an internal failure in the batch system cancels the batch job', () => {
    const c = must(AT.INLRMS, { type: 'processing-failed', reason: 'Internal error' });
    assert.deepEqual(c.effects, [{ type: 'cancel-batch-job', localId: 'L1' }]);
  });

  it('an internal failure during stage-out aborts it and keeps FINISHING', () => {
    const c = must(AT.FINISHING, { type: 'processing-failed', reason: 'Internal error' });
    assert.deepEqual(c.effects, [{ type: 'abort-staging' }]);
    assert.equal(c.to.outcome, 'failed');
    assert.equal(restState(must(c.to, { type: 'upload-failed', reason: 'aborted' }).to), 'FAILED');
  });

  it('processing-failed is refused in SUBMIT (a submission may be in flight) and in CANCELING', () => {
    assert.match(refused(AT.SUBMIT, { type: 'processing-failed', reason: 'x' }), /submit-failed/);
    assert.match(refused(AT.CANCELING, { type: 'processing-failed', reason: 'x' }), /already being stopped/);
  });
});

describe('kill', () => {
  it('a submission withdrawn by a kill ends KILLED with nothing to stop, restartable from SUBMIT', () => {
    const c = must({ ...AT.SUBMIT, killRequested: true }, { type: 'submit-withdrawn' });
    assert.equal(positionOf(c.to), 'CANCELING');
    assert.deepEqual(c.effects, [{ type: 'confirm-cancel' }]);
    assert.equal(c.to.killRequested, false);
    assert.equal(c.to.outcome, 'killed');
    assert.equal(c.to.failedState, 'SUBMIT');
    assert.equal(c.to.failedCause, 'client');
    const end = must(must(c.to, { type: 'cancel-done' }).to, { type: 'upload-done' }).to;
    assert.equal(restState(end), 'KILLED');
    assert.equal(restartRefusal(end), undefined);
    // Withdrawn only while the job is being submitted.
    for (const p of ['PENDING:PREPARING', 'INLRMS', 'CANCELING', 'FINISHED'] as const)
      assert.match(refused(AT[p], { type: 'submit-withdrawn' }), /not expected/);
  });

  it('a running job: INLRMS → CANCELING (KILLING, cancel the batch job) → FINISHING (cancel mode) → FINISHED KILLED', () => {
    const k = must({ ...AT.INLRMS, killRequested: true }, { type: 'kill-requested' });
    assert.equal(restState(k.to), 'KILLING');
    assert.deepEqual(k.effects, [{ type: 'cancel-batch-job', localId: 'L1' }]);
    assert.equal(k.to.killRequested, false, 'the flag is cleared once acted on');
    assert.equal(k.to.failedState, 'INLRMS');
    assert.equal(k.to.failedCause, 'client');
    assert.equal(k.to.failureReason, KILL_REASON);
    const f = must(k.to, { type: 'lrms-failed', reason: 'cancelled', exitCode: 143, localId: 'L1' });
    assert.equal(positionOf(f.to), 'FINISHING');
    assert.deepEqual(f.effects, [{ type: 'start-stage-out', mode: 'cancel' }]);
    assert.equal(f.to.exitCode, 143);
    assert.equal(f.to.failureReason, KILL_REASON);
    const end = must(f.to, { type: 'upload-done' }).to;
    assert.equal(restState(end), 'KILLED');
    assert.equal(end.outcome, 'killed');
  });

  it('a job that ends by itself while being cancelled is still KILLED', () => {
    const k = must(AT.INLRMS, { type: 'kill-requested' }).to;
    const f = must(k, { type: 'lrms-done', exitCode: 0, localId: 'L1' }).to;
    assert.equal(f.outcome, 'killed');
    assert.equal(restState(must(f, { type: 'upload-done' }).to), 'KILLED');
  });

  it('during stage-in: CANCELING with abort-staging; the stopped stage-in moves it on', () => {
    const k = must(AT.PREPARING, { type: 'kill-requested' });
    assert.deepEqual(k.effects, [{ type: 'abort-staging' }]);
    const f = must(k.to, { type: 'staging-failed', reason: 'aborted' });
    assert.deepEqual(f.effects, [{ type: 'start-stage-out', mode: 'cancel' }]);
  });

  for (const p of ['ACCEPTED', 'PENDING:ACCEPTED', 'PENDING:PREPARING', 'PENDING:INLRMS'] as const) {
    it(`in ${p} nothing runs: CANCELING with confirm-cancel, then cancel-done → FINISHING`, () => {
      const k = must(AT[p], { type: 'kill-requested' });
      assert.equal(restState(k.to), 'KILLING');
      assert.deepEqual(k.effects, [{ type: 'confirm-cancel' }]);
      assert.equal(k.to.failedState, AT[p].state);
      const d = must(k.to, { type: 'cancel-done' });
      assert.deepEqual(d.effects, [{ type: 'start-stage-out', mode: 'cancel' }]);
    });
  }

  it('during stage-out: stays FINISHING, aborts staging, ends KILLED', () => {
    const k = must(AT.FINISHING, { type: 'kill-requested' });
    assert.equal(positionOf(k.to), 'FINISHING');
    assert.deepEqual(k.effects, [{ type: 'abort-staging' }]);
    assert.equal(k.to.outcome, 'killed');
    assert.equal(k.to.failedState, 'FINISHING');
    assert.equal(restState(must(k.to, { type: 'upload-failed', reason: 'aborted' }).to), 'KILLED');
  });

  it('a failed job being finished can still be killed: it ends KILLED, the first failure stays', () => {
    const failing = must(AT.INLRMS, { type: 'lrms-done', exitCode: 1 }).to;
    const k = must(failing, { type: 'kill-requested' }).to;
    assert.equal(k.outcome, 'killed');
    assert.equal(k.failedState, 'INLRMS');
    assert.equal(k.failedCause, 'internal');
  });

  it('a second kill while the kill is in progress only clears the flag', () => {
    for (const s of [AT.CANCELING, must(AT.FINISHING, { type: 'kill-requested' }).to]) {
      const r = must({ ...s, killRequested: true }, { type: 'kill-requested' });
      assert.deepEqual(r.effects, []);
      assert.deepEqual(r.to, { ...s, killRequested: false });
    }
  });

  it('kill of a final job is refused, saying it has ended', () => {
    assert.equal(refused(AT.FINISHED, { type: 'kill-requested' }), 'Job has already ended (FAILED)');
    assert.equal(refused(AT.DELETED, { type: 'kill-requested' }), 'Job has already ended (WIPED)');
    assert.equal(killRefusal(AT.FINISHED), 'Job has already ended (FAILED)');
  });

  it('kill during SUBMIT is deferred until the backend has answered', () => {
    assert.match(refused(AT.SUBMIT, { type: 'kill-requested' }), /deferred/);
    const flagged = { ...AT.SUBMIT, killRequested: true };
    assert.equal(requestedEvent(flagged), undefined);
    const inLrms = must(flagged, { type: 'submitted', localId: 'L9' }).to;
    assert.equal(inLrms.killRequested, true);
    assert.equal(requestedEvent(inLrms), 'kill-requested');
    assert.deepEqual(must(inLrms, { type: 'kill-requested' }).effects, [{ type: 'cancel-batch-job', localId: 'L9' }]);
  });
});

describe('batch updates', () => {
  it('sub-states are the REST state while INLRMS', () => {
    for (const sub of ['QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER'] as const) {
      const r = must(AT.INLRMS, { type: 'lrms-state', lrmsState: sub });
      assert.equal(restState(r.to), sub);
      assert.deepEqual(r.effects, []);
    }
  });

  it('an update for another batch id (an earlier attempt) is refused', () => {
    assert.match(refused(AT.INLRMS, { type: 'lrms-done', exitCode: 0, localId: 'OLD' }), /another batch job/);
    assert.match(refused(AT.CANCELING, { type: 'lrms-failed', reason: 'x', localId: 'OLD' }), /another batch job/);
  });

  it('an update during SUBMIT without a batch id is refused', () => {
    assert.match(refused(AT.SUBMIT, { type: 'lrms-state', lrmsState: 'RUNNING' }), /batch id/);
  });

  it('a duplicate final update after the job moved on is refused (reported once)', () => {
    const f = must(AT.INLRMS, { type: 'lrms-done', exitCode: 0, localId: 'L1' }).to;
    assert.match(refused(f, { type: 'lrms-done', exitCode: 0, localId: 'L1' }), /ignored/);
  });
});

describe('restart (A-REX §7.5)', () => {
  const finishedFailedIn = (failedState: InternalState, extra: Partial<MachineState> = {}): MachineState => ({
    ...AT.FINISHED,
    failedState,
    restartRequested: true,
    ...extra,
  });

  const entries: Array<[InternalState, boolean, Position]> = [
    ['ACCEPTED', false, 'PENDING:ACCEPTED'],
    ['PREPARING', false, 'PENDING:ACCEPTED'],
    ['PREPARING', true, 'PENDING:ACCEPTED'],
    ['SUBMIT', false, 'PENDING:ACCEPTED'],
    ['SUBMIT', true, 'PENDING:PREPARING'],
    ['INLRMS', false, 'PENDING:ACCEPTED'],
    ['INLRMS', true, 'PENDING:PREPARING'],
    ['FINISHING', false, 'PENDING:INLRMS'],
  ];
  for (const [failedState, inputsComplete, entry] of entries) {
    it(`failed in ${failedState}${inputsComplete ? ', inputs complete' : ''} → ${entry}`, () => {
      const r = must(finishedFailedIn(failedState), { type: 'restart-requested', inputsComplete });
      assert.equal(positionOf(r.to), entry);
      assert.equal(r.to.rerunsLeft, 1);
      assert.equal(r.to.restartRequested, false);
      assert.equal(r.to.failedState, null);
      assert.equal(r.to.failureReason, null);
      assert.equal(checkInvariants(r.to), undefined);
      assert.equal(r.effects[0]?.type, 'prepare-rerun');
    });
  }

  it('re-entry before the batch step forgets the previous batch job', () => {
    const r = must(finishedFailedIn('INLRMS'), { type: 'restart-requested', inputsComplete: true });
    assert.equal(r.to.localId, null);
    assert.equal(r.to.exitCode, null);
    assert.equal(r.to.outcome, null);
    assert.deepEqual(r.effects, [{ type: 'prepare-rerun' }, { type: 'await-slot', step: 'SUBMIT' }]);
  });

  it('re-entry for stage-out keeps the batch result and retries stage-out in success mode', () => {
    const s = finishedFailedIn('FINISHING', { exitCode: 0 });
    const r = must(s, { type: 'restart-requested' });
    assert.equal(r.to.exitCode, 0);
    assert.equal(r.to.outcome, 'success');
    assert.equal(restState(r.to), 'EXECUTED');
    assert.deepEqual(must(r.to, { type: 'limit-release' }).effects, [{ type: 'start-stage-out', mode: 'success' }]);
  });

  it('a killed job can be restarted', () => {
    const killed: MachineState = {
      ...AT.FINISHED,
      outcome: 'killed',
      failedState: 'INLRMS',
      failedCause: 'client',
      failureReason: KILL_REASON,
      killRequested: true,
    };
    const r = must(killed, { type: 'restart-requested', inputsComplete: true });
    assert.equal(positionOf(r.to), 'PENDING:PREPARING');
    assert.equal(r.to.killRequested, false, 'a stale kill flag does not kill the new attempt');
  });

  it('refused without reruns left', () => {
    assert.equal(
      refused(finishedFailedIn('INLRMS', { rerunsLeft: 0 }), { type: 'restart-requested' }),
      'No more restarts allowed',
    );
  });

  it('refused for a job that did not fail', () => {
    assert.equal(refused(AT.DELETED, { type: 'restart-requested' }), 'Job is already wiped');
    const ok: MachineState = {
      ...AT.FINISHED,
      outcome: 'success',
      failedState: null,
      failedCause: null,
      failureReason: null,
    };
    assert.equal(refused(ok, { type: 'restart-requested' }), 'Job has not failed');
  });

  it('refused for a failed state that has no re-entry', () => {
    assert.match(
      refused(finishedFailedIn('CANCELING'), { type: 'restart-requested' }),
      /cannot be restarted from CANCELING/,
    );
  });

  it('refused while a clean is pending', () => {
    assert.equal(
      refused(finishedFailedIn('INLRMS', { cleanRequested: true }), { type: 'restart-requested' }),
      'Job is being cleaned',
    );
  });

  it('refused for an active job: it waits until FINISHED', () => {
    for (const p of ['ACCEPTED', 'PREPARING', 'SUBMIT', 'INLRMS', 'FINISHING', 'CANCELING'] as const) {
      assert.equal(refused(AT[p], { type: 'restart-requested' }), 'Job has not finished yet');
    }
  });

  it('restartRefusal agrees with next()', () => {
    for (const s of [
      finishedFailedIn('INLRMS'),
      finishedFailedIn('INLRMS', { rerunsLeft: 0 }),
      AT.DELETED,
      AT.INLRMS,
    ]) {
      const r = next(s, { type: 'restart-requested' });
      assert.equal(restartRefusal(s), r.ok ? undefined : r.reason);
    }
  });
});

describe('clean and lifetime', () => {
  it('clean of a final job removes it', () => {
    for (const p of ['FINISHED', 'DELETED'] as const) {
      const r = must({ ...AT[p], cleanRequested: true }, { type: 'clean-requested' });
      assert.deepEqual(r.effects, [{ type: 'remove-job' }]);
      assert.equal(r.to.cleanRequested, false);
    }
  });

  it('clean of an active job is deferred until it ends', () => {
    const flagged: MachineState = { ...AT.INLRMS, cleanRequested: true };
    assert.match(refused(flagged, { type: 'clean-requested' }), /deferred/);
    assert.equal(requestedEvent(flagged), undefined);
    const done = must(must(flagged, { type: 'lrms-done', exitCode: 0 }).to, { type: 'upload-done' }).to;
    assert.equal(done.cleanRequested, true, 'the flag survives the way to FINISHED');
    assert.equal(requestedEvent(done), 'clean-requested');
  });

  it('lifetime expiry wipes a finished job: DELETED, REST WIPED', () => {
    const r = must(AT.FINISHED, { type: 'lifetime-expired' });
    assert.equal(restState(r.to), 'WIPED');
    assert.deepEqual(r.effects, [{ type: 'wipe-session' }]);
    assert.match(refused(AT.INLRMS, { type: 'lifetime-expired' }), /starts when the job has ended/);
    assert.match(refused(AT.DELETED, { type: 'lifetime-expired' }), /already wiped/);
  });
});

describe('requestedEvent', () => {
  it('acts on kill first, then clean, then restart', () => {
    assert.equal(requestedEvent({ ...AT.INLRMS, killRequested: true, cleanRequested: true }), 'kill-requested');
    assert.equal(requestedEvent({ ...AT.FINISHED, cleanRequested: true, restartRequested: true }), 'clean-requested');
    assert.equal(requestedEvent({ ...AT.FINISHED, restartRequested: true }), 'restart-requested');
    assert.equal(requestedEvent(AT.FINISHED), undefined);
  });

  it('ignores flags that cannot be acted on (kill of a final job, restart without reruns)', () => {
    assert.equal(requestedEvent({ ...AT.FINISHED, killRequested: true }), undefined);
    assert.equal(requestedEvent({ ...AT.FINISHED, restartRequested: true, rerunsLeft: 0 }), undefined);
  });
});

describe('REST mapping', () => {
  it('maps every position as spec §3 says', () => {
    const want: Record<Position, RestState> = {
      ACCEPTED: 'ACCEPTING',
      'PENDING:ACCEPTED': 'ACCEPTED',
      PREPARING: 'PREPARING',
      'PENDING:PREPARING': 'PREPARED',
      SUBMIT: 'SUBMITTING',
      INLRMS: 'RUNNING',
      'PENDING:INLRMS': 'EXECUTED',
      FINISHING: 'FINISHING',
      CANCELING: 'KILLING',
      FINISHED: 'FAILED',
      DELETED: 'WIPED',
    };
    for (const p of POSITIONS) assert.equal(restState(AT[p]), want[p], p);
  });

  it('FINISHED splits by outcome into FINISHED, FAILED, KILLED', () => {
    assert.equal(restState({ ...AT.DELETED, state: 'FINISHED' }), 'FINISHED');
    assert.equal(restState(AT.FINISHED), 'FAILED');
    assert.equal(restState({ ...AT.FINISHED, outcome: 'killed' }), 'KILLED');
  });

  it('every REST state is reachable from some job', () => {
    const seen = new Set<RestState>();
    for (const p of POSITIONS) seen.add(restState(AT[p]));
    for (const sub of ['QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER'] as const)
      seen.add(restState({ ...AT.INLRMS, lrmsState: sub }));
    seen.add(restState({ ...AT.FINISHED, outcome: 'killed' }));
    seen.add(restState({ ...AT.FINISHED, outcome: 'success' }));
    assert.deepEqual([...seen].sort(), [...REST_STATES].sort());
  });

  it('batch sub-states have A-REX letters for the info document', () => {
    assert.deepEqual((['QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER'] as const).map(lrmsLetter), [
      'Q',
      'R',
      'S',
      'E',
      'O',
    ]);
  });
});

describe('stored fields', () => {
  const stored = (s: MachineState): Parameters<typeof machineStateOf>[0] => ({ ...s });

  it('persistedFields always has the same keys and the derived REST state', () => {
    const keys = Object.keys(persistedFields(base)).sort();
    for (const p of POSITIONS) {
      const f = persistedFields(AT[p]);
      assert.deepEqual(Object.keys(f).sort(), keys);
      assert.equal(f.restState, restState(AT[p]));
    }
  });

  it('machineStateOf reads back what the machine wrote', () => {
    for (const p of POSITIONS) assert.deepEqual(machineStateOf(stored(AT[p])), AT[p]);
  });

  const bad: Array<[string, Record<string, unknown>]> = [
    ['unknown state', { state: 'RUNNING' }],
    ['unknown batch state', { lrmsState: 'R' }],
    ['unknown outcome', { outcome: 'ok' }],
    [
      'unknown cause',
      { state: 'FINISHED', outcome: 'failed', failedState: 'INLRMS', failedCause: 'user', failureReason: 'x' },
    ],
    ['pending FINISHING', { state: 'FINISHING', pending: true, outcome: 'success' }],
    ['INLRMS without batch state', { state: 'INLRMS' }],
    ['FINISHED without outcome', { state: 'FINISHED' }],
    ['failure fields half set', { state: 'FINISHED', outcome: 'failed', failedState: 'INLRMS' }],
    ['negative reruns', { rerunsLeft: -1 }],
  ];
  for (const [name, patch] of bad) {
    it(`machineStateOf rejects a record with ${name}`, () => {
      assert.throws(
        () => machineStateOf({ ...stored(base), ...patch }),
        (e: unknown) => isCeError(e) && e.code === 'CE_ERR_ENGINE_BAD_RECORD',
      );
    });
  }
});

describe('properties', () => {
  const anyEvent: fc.Arbitrary<EngineEvent> = fc.oneof(
    fc.constantFrom(...Object.values(SAMPLES)),
    fc.record({
      type: fc.constant('lrms-done' as const),
      exitCode: fc.integer({ min: 0, max: 255 }),
      hold: fc.boolean(),
    }),
    fc.record({ type: fc.constant('submitted' as const), localId: fc.constantFrom('L1', 'L2') }),
  );

  it('any event sequence keeps every invariant; refusals leave the job unchanged', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.array(anyEvent, { maxLength: 60 }), (reruns, events) => {
        let s = initialState(reruns);
        for (const e of events) {
          const flags = {
            killRequested: e.type === 'kill-requested' || s.killRequested,
            restartRequested: s.restartRequested || e.type === 'restart-requested',
          };
          const r = next({ ...s, ...flags }, e);
          if (!r.ok) continue;
          assert.equal(checkInvariants(r.to), undefined, `${positionOf(s)} --${e.type}--> ${positionOf(r.to)}`);
          assert.ok(r.to.rerunsLeft <= s.rerunsLeft);
          s = r.to;
        }
      }),
      { numRuns: 500 },
    );
  });

  it('from every non-final position a kill leads to KILLED without further failures', () => {
    for (const p of POSITIONS) {
      if (p === 'FINISHED' || p === 'DELETED' || p === 'SUBMIT') continue;
      let s = must(AT[p], { type: 'kill-requested' }).to;
      for (let i = 0; i < 5 && s.state !== 'FINISHED'; i++) {
        const e: EngineEvent = s.state === 'CANCELING' ? { type: 'cancel-done' } : { type: 'upload-done' };
        s = must(s, e).to;
      }
      assert.equal(restState(s), 'KILLED', p);
    }
  });

  it('every internal state appears in some position', () => {
    assert.deepEqual(new Set(POSITIONS.map((p) => p.replace('PENDING:', ''))), new Set(INTERNAL_STATES));
  });
});

describe('resumeEffects: what a restarted service starts again', () => {
  const want: Record<Position, readonly Effect[]> = {
    ACCEPTED: [],
    'PENDING:ACCEPTED': [{ type: 'await-slot', step: 'PREPARING' }],
    PREPARING: [{ type: 'start-stage-in' }],
    'PENDING:PREPARING': [{ type: 'await-slot', step: 'SUBMIT' }],
    SUBMIT: [{ type: 'submit-batch-job' }],
    INLRMS: [{ type: 'recover-batch-job', localId: 'L1' }],
    'PENDING:INLRMS': [{ type: 'await-slot', step: 'FINISHING' }],
    FINISHING: [{ type: 'start-stage-out', mode: 'success' }],
    CANCELING: [
      { type: 'recover-batch-job', localId: 'L1' },
      { type: 'cancel-batch-job', localId: 'L1' },
    ],
    FINISHED: [],
    DELETED: [],
  };
  for (const p of POSITIONS) {
    it(`${p}`, () => assert.deepEqual(resumeEffects(AT[p]), want[p]));
  }

  it('a job cancelled during stage-in has nothing left running after a restart', () => {
    const c = must(AT.PREPARING, { type: 'kill-requested' }).to;
    assert.deepEqual(resumeEffects(c), [{ type: 'confirm-cancel' }]);
  });

  it('a killed job finishing resumes its stage-out in cancel mode', () => {
    const f = must(must(AT.INLRMS, { type: 'kill-requested' }).to, { type: 'cancel-done' }).to;
    assert.deepEqual(resumeEffects(f), [{ type: 'start-stage-out', mode: 'cancel' }]);
  });
});
