// The batch backend conformance suite on a real Slurm (munge + slurmctld + slurmd started
// for this file by scripts/slurm-dev.sh).
import { describe } from 'node:test';
import { runBackendSuite } from './backend.case.js';
import { SlurmBackend } from '../../src/lrms/slurm/slurm-backend.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip();
describe('slurm backend on a real Slurm', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  runBackendSuite({
    name: 'slurm',
    newBackend: ({ workDir }) =>
      SlurmBackend.create({
        workDir,
        slurmConf: slurm.conf,
        pollIntervalMs: 300,
        killGraceSeconds: 2,
        sampleIntervalMs: 100,
        statusGraceMs: 2000,
        backoffMs: 200,
      }),
    manyJobs: 100,
    settleMs: 1500,
  });
});
