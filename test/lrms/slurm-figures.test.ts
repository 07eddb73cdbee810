// A job's end under Slurm: the job wrapper's status file (the job's word: the wrapper runs
// as the job's account) corrected by what Slurm measured. Slurm's figures win where it has
// them; every figure only the file gave is listed as reported by the job; a signal Slurm
// saw end the batch step replaces the exit code the file claims.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BatchResult } from '../../src/lrms/backend.js';
import {
  jobReportedOnly,
  signalName,
  withSlurmFigures,
  type SlurmFigures,
} from '../../src/lrms/slurm/slurm-figures.js';
import { USAGE_FIGURES } from '../../src/vocabulary/usage-figures.js';

/** What a forging job writes: exit 0, almost no CPU, a small memory figure. */
const forged: BatchResult = {
  exitCode: 0,
  wallTimeSeconds: 1,
  cpuTimeSeconds: 0.01,
  userTimeSeconds: 0.01,
  kernelTimeSeconds: 0,
  maxRssBytes: 1024,
  startTime: new Date('2026-12-01T10:00:00Z'),
  endTime: new Date('2026-12-01T10:00:01Z'),
  nodes: ['forged-node'],
};

/** The controller's record (scontrol): run time, times, nodes, the batch step's exit code and signal. */
const controller = (patch: Partial<SlurmFigures> = {}): SlurmFigures => ({
  fields: new Map(),
  state: 'COMPLETED',
  reason: 'None',
  exitCode: 0,
  signal: 0,
  start: new Date('2026-12-01T10:00:00Z'),
  end: new Date('2026-12-01T10:00:09Z'),
  runSeconds: 9,
  nodes: ['n1'],
  ...patch,
});

describe("Slurm's figures over the job's own report", () => {
  it("accounting (sacct): wall, CPU, memory, times and nodes are Slurm's; the exit code stays the job's word", () => {
    const r = withSlurmFigures(
      forged,
      controller({ userCpuSeconds: 7.5, systemCpuSeconds: 0.5, maxRssBytes: 50 * 1024 * 1024 }),
    );
    assert.equal(r.wallTimeSeconds, 9);
    assert.equal(r.cpuTimeSeconds, 8);
    assert.equal(r.userTimeSeconds, 7.5);
    assert.equal(r.kernelTimeSeconds, 0.5);
    assert.equal(r.maxRssBytes, 50 * 1024 * 1024);
    assert.deepEqual(r.nodes, ['n1']);
    assert.equal(r.endTime?.toISOString(), '2026-12-01T10:00:09.000Z');
    assert.equal(r.exitCode, 0);
    assert.deepEqual(r.jobReported, ['exitCode']);
  });

  it("the controller alone (no slurmdbd): CPU time and memory stay the job's word, and are marked", () => {
    const r = withSlurmFigures(forged, controller());
    assert.equal(r.wallTimeSeconds, 9, "the controller's run time");
    assert.equal(r.cpuTimeSeconds, 0.01);
    assert.equal(r.maxRssBytes, 1024);
    assert.deepEqual(r.jobReported, ['exitCode', 'cpuTime', 'maxRss']);
  });

  it('a wrapper a signal ended wrote no report: the exit code is the signal, and the job fails', () => {
    const r = withSlurmFigures(
      forged,
      controller({ state: 'FAILED', signal: 9, userCpuSeconds: 4, systemCpuSeconds: 0 }),
    );
    assert.equal(r.exitCode, 137);
    assert.equal(r.signal, 'SIGKILL');
    assert.match(r.failureReason ?? '', /ended by SIGKILL/);
    assert.equal(r.cpuTimeSeconds, 4);
    assert.deepEqual(r.jobReported, ['maxRss'], "Slurm's signal and CPU time; only the memory is the job's word");
    // A reason the wrapper gave (a limit it enforced) stays.
    const limit = withSlurmFigures(
      { ...forged, failureReason: 'wall time limit exceeded' },
      controller({ signal: 15 }),
    );
    assert.equal(limit.failureReason, 'wall time limit exceeded');
    assert.equal(limit.exitCode, 143);
  });

  it("Slurm without a start, nodes or times (a record cut short): those are the job's, marked", () => {
    const r = withSlurmFigures(forged, controller({ start: null, end: null, nodes: [], runSeconds: 0 }));
    assert.equal(r.wallTimeSeconds, 1);
    assert.deepEqual(r.nodes, ['forged-node']);
    assert.deepEqual(r.jobReported, ['exitCode', 'wallTime', 'cpuTime', 'maxRss', 'startTime', 'endTime', 'nodes']);
  });

  it("no Slurm record at all: every figure is the job's word", () => {
    assert.deepEqual(withSlurmFigures(forged, undefined).jobReported, [...USAGE_FIGURES]);
    assert.deepEqual(jobReportedOnly(forged).jobReported, [...USAGE_FIGURES]);
    assert.equal(jobReportedOnly(forged).cpuTimeSeconds, 0.01, 'kept, only marked');
  });

  it("signal names: Node's, or the number", () => {
    assert.equal(signalName(9), 'SIGKILL');
    assert.equal(signalName(200), 'signal 200');
  });
});
