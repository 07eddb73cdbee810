// Backend updates become state-machine events with readable reasons, and the events
// move an INLRMS job where the machine says.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { batchUpdateEvent } from '../../src/engine/batch-events.js';
import { next } from '../../src/engine/state-machine.js';
import { initialState, type MachineState } from '../../src/engine/states.js';
import { restState } from '../../src/vocabulary/job-states.js';
import type { BatchResult } from '../../src/lrms/backend.js';

const result = (patch: Partial<BatchResult>): BatchResult => ({
  exitCode: 0,
  wallTimeSeconds: 1,
  cpuTimeSeconds: 0.5,
  userTimeSeconds: 0.4,
  kernelTimeSeconds: 0.1,
  maxRssBytes: 1 << 20,
  startTime: new Date(0),
  endTime: new Date(1000),
  nodes: ['n1'],
  ...patch,
});
const final = (patch: Partial<BatchResult>) => ({ kind: 'final' as const, jobId: 'j', result: result(patch) });
const running: MachineState = { ...initialState(0), state: 'INLRMS', lrmsState: 'QUEUING', localId: '77' };

function after(ev: ReturnType<typeof batchUpdateEvent>): MachineState {
  const r = next(running, ev);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.ok ? r.to : running;
}

describe('batchUpdateEvent', () => {
  it('a state update becomes lrms-state for that batch job', () => {
    const ev = batchUpdateEvent('77', { kind: 'state', jobId: 'j', state: 'RUNNING' });
    assert.deepEqual(ev, { type: 'lrms-state', lrmsState: 'RUNNING', localId: '77' });
    assert.equal(restState(after(ev)), 'RUNNING');
  });

  it('exit 0 succeeds; the expected exit code is passed on', () => {
    assert.equal(after(batchUpdateEvent('77', final({ exitCode: 0 }))).outcome, 'success');
    const ev = batchUpdateEvent('77', final({ exitCode: 2 }), { expectedExitCode: 2 });
    assert.equal(after(ev).outcome, 'success');
  });

  it('a non-zero exit fails with the exit code in the reason', () => {
    const s = after(batchUpdateEvent('77', final({ exitCode: 1 })));
    assert.equal(s.failureReason, 'LRMS error: (1) Job finished with exit code 1');
    assert.equal(s.exitCode, 1);
  });

  it("a backend's failure reason is the job's", () => {
    const s = after(batchUpdateEvent('77', final({ exitCode: 143, failureReason: 'wall time limit exceeded' })));
    assert.equal(s.failureReason, 'LRMS error: (143) wall time limit exceeded');
    assert.equal(s.failedState, 'INLRMS');
  });

  it('a signal names itself', () => {
    const s = after(batchUpdateEvent('77', final({ exitCode: 139, signal: 'SIGSEGV' })));
    assert.equal(s.failureReason, 'LRMS error: (139) Job was killed by signal SIGSEGV');
  });

  it('an unknown exit status is a failure, not a success', () => {
    const s = after(batchUpdateEvent('77', final({ exitCode: null })));
    assert.equal(s.outcome, 'failed');
    assert.equal(s.failureReason, 'LRMS error: Job exit status is unknown');
  });

  it('hold makes the job wait as EXECUTED', () => {
    assert.equal(restState(after(batchUpdateEvent('77', final({}), { hold: true }))), 'EXECUTED');
  });
});
