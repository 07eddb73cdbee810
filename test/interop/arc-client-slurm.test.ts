// The real ARC client's whole life cycle (./arc-client.case.ts) against Ceres whose jobs run
// in a real Slurm (munge + slurmctld + slurmd started for this file by scripts/slurm-dev.sh);
// the queues are the Slurm partitions. Skipped where Slurm is not installed unless
// CERES_REQUIRE_SLURM=1 (CI), which makes that a failure.
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { arcClientLifecycle } from './arc-client.case.js';
import { slurmSkip, useSlurm } from '../lrms/slurm-fixture.js';

const skip = slurmSkip();
arcClientLifecycle({
  title: 'the real ARC client against Ceres on Slurm',
  ...(skip !== undefined ? { skip } : {}),
  queue: 'debug',
  prepare: () => {
    // Registered first, so it runs before the cluster is stopped: the jobs did run in Slurm.
    after(() => {
      const done = readFileSync(join(slurm.dir, 'jobcomp.txt'), 'utf8');
      assert.ok(
        (done.match(/ Name=ceres-\S+ JobState=COMPLETED /g) ?? []).length >= 4,
        `Slurm's completed jobs:\n${done}`,
      );
    });
    const slurm = useSlurm();
    return () => ({
      cluster: { queues: [{ name: 'debug' }, { name: 'long' }] },
      lrms: {
        backend: 'slurm',
        slurm: { slurmConf: slurm.conf, pollIntervalMs: 500, killGraceSeconds: 2, statusGraceMs: 3000, backoffMs: 200 },
      },
    });
  },
});
