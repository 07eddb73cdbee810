// The cancel rule shared by the batch backends (src/lrms/core/cancel-result.ts): a job that
// ended after the cancel was asked for ended because of it, unless a limit stopped it. End
// times from batch systems are whole seconds.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { afterCancel } from '../../src/lrms/core/cancel-result.js';
import type { BatchResult } from '../../src/lrms/backend.js';

const result = (end: number | null, failureReason?: string): BatchResult => ({
  exitCode: 0,
  wallTimeSeconds: 1,
  cpuTimeSeconds: 0,
  userTimeSeconds: 0,
  kernelTimeSeconds: 0,
  maxRssBytes: 0,
  startTime: null,
  endTime: end === null ? null : new Date(end),
  nodes: [],
  ...(failureReason !== undefined ? { failureReason } : {}),
});

describe('the cancel rule', () => {
  const cancel = Date.UTC(2026, 11, 2, 5, 40, 12, 400);

  it('a job never cancelled keeps its result', () => {
    assert.equal(afterCancel(result(cancel + 5000), 0).failureReason, undefined);
  });

  it('a job that ended after the cancel was cancelled', () => {
    assert.equal(afterCancel(result(cancel + 1000), cancel).failureReason, 'cancelled');
    assert.equal(afterCancel(result(null), cancel).failureReason, 'cancelled');
  });

  it('an end in whole seconds within the second of the cancel counts as after it', () => {
    // Slurm says 05:40:12 for an end at 05:40:12.600, after a cancel at 05:40:12.400.
    assert.equal(afterCancel(result(Date.UTC(2026, 11, 2, 5, 40, 12)), cancel).failureReason, 'cancelled');
  });

  it('a job that ended in an earlier second ended first, on its own', () => {
    assert.equal(afterCancel(result(Date.UTC(2026, 11, 2, 5, 40, 11)), cancel).failureReason, undefined);
  });

  it('a limit that stopped the job stays the reason', () => {
    assert.equal(
      afterCancel(result(cancel + 1000, 'wall time limit exceeded'), cancel).failureReason,
      'wall time limit exceeded',
    );
    assert.equal(
      afterCancel(result(cancel + 1000, 'memory limit exceeded'), cancel).failureReason,
      'memory limit exceeded',
    );
  });
});
