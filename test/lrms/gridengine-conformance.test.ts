// The batch backend conformance suite on a real Grid Engine (sge_qmaster + sge_execd
// started for this file by scripts/gridengine-dev.sh).
import { describe } from 'node:test';
import { runBackendSuite } from './backend.case.js';
import { GridEngineBackend } from '../../src/lrms/gridengine/gridengine-backend.js';
import { gridEngineSkip, useGridEngine } from './gridengine-fixture.js';

const skip = gridEngineSkip();
describe('gridengine backend on a real Grid Engine', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const ge = useGridEngine();
  runBackendSuite({
    name: 'gridengine',
    newBackend: ({ workDir }) =>
      GridEngineBackend.create({
        workDir,
        ...ge.settings(),
        pollIntervalMs: 300,
        killGraceSeconds: 2,
        sampleIntervalMs: 100,
        statusGraceMs: 3000,
        backoffMs: 200,
      }),
    manyJobs: 50,
    settleMs: 1500,
  });
});
