/**
 * Job rows for the web benches, written straight into a store: `jobs` jobs of 50 owners
 * (`/O=Grid/CN=user<i % 50>`), names repeating, ends spread over a day, a third with an
 * ATLAS FQAN, every `activeEvery`-th job still running (no end, REST state RUNNING). The engine's
 * state is FINISHED for all unless `engineStates` (then INLRMS, batch state RUNNING, for the
 * running ones): a service started on the store would poll or run them. Returns the fill's
 * CPU time.
 */
import type { Db } from '../../src/store/database.js';

const desc = JSON.stringify({ executable: '/bin/sh', arguments: ['-c', 'x'.repeat(200)] });

export function fillJobs(
  db: Db,
  jobs: number,
  o: { activeEvery?: number; queues?: readonly string[]; engineStates?: boolean } = {},
): number {
  const activeEvery = o.activeEvery ?? 20;
  const queues = o.queues ?? ['main'];
  const ins = db.prepare(
    `INSERT INTO jobs (id, owner, owner_dn, name, state, lrms_state, rest_state, queue, format, description, raw, created_at, started_at, ended_at, exit_code, local_account, fqans, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'xrsl', ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
  );
  const t0 = 1_700_000_000_000;
  const c0 = process.cpuUsage();
  db.transaction(() => {
    for (let i = 0; i < jobs; i++) {
      const owner = `/O=Grid/CN=user${i % 50}`;
      const ended = i % activeEvery === 0 ? null : t0 + i + ((i * 7919) % 86_400_000);
      ins.run(
        `j${String(i).padStart(9, '0')}`,
        owner,
        owner,
        `analysis-${i % 997}-step${i % 13}`,
        ended === null && o.engineStates === true ? 'INLRMS' : 'FINISHED',
        ended === null && o.engineStates === true ? 'RUNNING' : null,
        ended === null ? 'RUNNING' : i % 10 === 1 ? 'FAILED' : 'FINISHED',
        queues[i % queues.length],
        desc,
        desc,
        t0 + i,
        t0 + i + 1000,
        ended,
        ended === null ? null : i % 10 === 1 ? 1 : 0,
        `pool${String(i % 200).padStart(3, '0')}`,
        i % 3 === 0 ? JSON.stringify(['/atlas/Role=production']) : null,
      );
    }
  })();
  const c = process.cpuUsage(c0);
  return Math.round((c.user + c.system) / 1000);
}
