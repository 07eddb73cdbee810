// The real ARC client's whole life cycle (./arc-client.case.ts) against Ceres whose jobs run
// in a real Grid Engine (sge_qmaster + sge_execd started for this file by
// scripts/gridengine-dev.sh); the queues are Grid Engine's. Skipped where Grid Engine is not
// installed unless CERES_REQUIRE_GRIDENGINE=1 (CI), which makes that a failure; the client
// itself as in every interop test (CERES_REQUIRE_INTEROP).
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { arcClientLifecycle } from './arc-client.case.js';
import { until } from '../lrms/backend.case.js';
import { gridEngineSkip, useGridEngine } from '../lrms/gridengine-fixture.js';

const skip = gridEngineSkip();
arcClientLifecycle({
  title: 'the real ARC client against Ceres on Grid Engine',
  ...(skip !== undefined ? { skip } : {}),
  queue: 'all.q',
  prepare: () => {
    // Registered first, so it runs before the cell is stopped: the jobs did run in Grid
    // Engine (its accounting has their records; they reach it some seconds after the end).
    after(async () => {
      const ended = (): string[] => {
        try {
          return [...ge.cmd('qacct', ['-j', 'ceres-*']).matchAll(/^jobname\s+(ceres-\S+)$/gm)].map(
            (m) => m[1] as string,
          );
        } catch {
          return [];
        }
      };
      await until("Grid Engine's accounting of the client's jobs", () => ended().length >= 4, 60_000);
      assert.ok(ended().length >= 4, ended().join(' '));
    });
    const ge = useGridEngine();
    return () => ({
      cluster: { queues: [{ name: 'all.q' }, { name: 'long' }] },
      lrms: {
        backend: 'gridengine',
        gridengine: {
          ...ge.settings(),
          pollIntervalMs: 500,
          killGraceSeconds: 2,
          statusGraceMs: 3000,
          backoffMs: 200,
        },
      },
    });
  },
});
